export * from './program.ts';
export { CelTyped, fromCelValue, toCelValue } from './values.ts';
