// Import boundaries (docs/architecture.md, "Boundaries"), checked by `npm run lint` (depcruise). One rule per
// boundary; every exception is listed here by path with the reason, so a new one is a reviewed change.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'core-folder-cycle',
      severity: 'error',
      comment: 'No import loop between folders of core/: move the shared piece down, or pass it in as a parameter.',
      scope: 'folder',
      from: { path: '^core/' },
      to: { path: '^core/', circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|\\.tools|\\.data|dist|coverage|bench/results)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};
