// Vite (vitest) loads a file's text with the `?raw` suffix; tests use it to compare deploy/crds.
declare module '*?raw' {
  const text: string;
  export default text;
}
