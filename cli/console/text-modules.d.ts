/** The console page ships inside the bundle as text (esbuild's text loader). */
declare module '*.html' {
  const text: string;
  export default text;
}
