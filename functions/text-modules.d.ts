/** Markdown files imported as text (esbuild's text loader; the jest transformer does the same). */
declare module '*.md' {
  const text: string;
  export default text;
}
