export * from './program.ts';
export { CelTyped, fromCelValue, parseTimestamp as parseCelTimestamp, toCelValue } from './values.ts';
