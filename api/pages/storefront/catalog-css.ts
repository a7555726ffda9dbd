/** The few styles the catalog views add to a frame's (the storefront's and the console's; issue 31). */
export const CATALOG_CSS = `
  pre.snippet, pre.schema { background: #f3f4f7; border: 1px solid #e2e2e2; border-radius: 6px; padding: .7rem .9rem; overflow-x: auto; font: .85rem/1.45 ui-monospace, monospace; white-space: pre; }
  pre.schema { max-height: 24rem; overflow: auto; }
  .snippets h3 { font-size: 1rem; margin: 1.2rem 0 .3rem; }
  .step { background: #fff; border: 1px solid #1f4aa0; border-radius: 6px; padding: .4rem 1rem; margin: 1rem 0; }
  .provider-head { display: flex; gap: 1rem; align-items: center; }
  .provider-head img { width: 64px; height: 64px; border-radius: 8px; object-fit: cover; }
  .boards { display: grid; grid-template-columns: repeat(auto-fit, minmax(20rem, 1fr)); gap: 0 1.5rem; }
  details.schemas summary { color: #1f4aa0; cursor: pointer; }
`;
