// Import boundaries (docs/architecture.md, "Boundaries"), checked by `npm run lint` (`depcruise`). Layers, bottom up:
// db/ (entities, migrations) < core/ (the domain, one folder per subject) < platform/ (process infrastructure) <
// the entry points api/, gateway/, mcp/, cli/, activities/ + workflows/ < scripts/, bench/, test/.
// Every exception is listed here by path, with its reason: adding one is a reviewed change to this file.
const ENTRY_POINTS = ['api', 'gateway', 'mcp', 'cli', 'activities', 'workflows'];
const above = (...dirs) => `^(${dirs.join('|')})/`;

/** core/ files that may import platform/, each the one module named there. */
const CORE_TO_PLATFORM = {
  // The OAuth provider is a Koa app: it reads client addresses by the same proxy-trust rule as every other app.
  'core/oauth/oauth-provider.ts': 'platform/runtime/proxy-trust.ts',
};

/**
 * mcp/ hosts the control plane and the gateway in the same process (one port, docs/architecture.md): it mounts the
 * API app and its health routes, shares the API's request context and body reader, and calls the gateway in process.
 */
const MCP_MAY_IMPORT = [
  'api/app.ts',
  'api/context.ts',
  'api/routes/health.routes.ts',
  'api/middleware/body.ts',
  'gateway/app.ts',
  'gateway/in-process.ts',
];

const exact = (paths) => `^(${paths.map((p) => p.replace(/[.]/g, '\\.')).join('|')})$`;

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: 'core-folder-cycle',
      severity: 'error',
      comment:
        'An import loop between folders of core/ (core/<area>). Move the shared piece down (core/db/sql.ts, ' +
        'core/money/, a loose core/*.ts) or pass the collaborator in as an interface (core/auth/authenticator.ts).',
      scope: 'folder',
      from: { path: '^core/' },
      to: { path: '^core/', circular: true },
    },
    {
      name: 'core-upward',
      severity: 'error',
      comment: 'core/ is the domain: it never imports an entry point, a script or a test.',
      from: { path: '^core/' },
      to: { path: above(...ENTRY_POINTS, 'scripts', 'bench', 'test') },
    },
    {
      name: 'core-to-platform',
      severity: 'error',
      comment: 'core/ must not import platform/ (process infrastructure) except the pairs in CORE_TO_PLATFORM.',
      from: { path: '^core/', pathNot: exact(Object.keys(CORE_TO_PLATFORM)) },
      to: { path: '^platform/' },
    },
    ...Object.entries(CORE_TO_PLATFORM).map(([from, to]) => ({
      name: 'core-to-platform',
      severity: 'error',
      comment: `${from} may import ${to} from platform/, nothing else there.`,
      from: { path: exact([from]) },
      to: { path: '^platform/', pathNot: exact([to]) },
    })),
    {
      name: 'db-upward',
      severity: 'error',
      comment: 'db/ (entities, migrations, the ORM config) is the bottom layer.',
      from: { path: '^db/' },
      to: { path: above('core', 'platform', ...ENTRY_POINTS, 'scripts', 'bench', 'test') },
    },
    {
      name: 'platform-upward',
      severity: 'error',
      comment: 'platform/ runs processes for the entry points; it never imports one (scripts/start.ts wires them).',
      from: { path: '^platform/' },
      to: { path: above(...ENTRY_POINTS, 'scripts', 'bench', 'test') },
    },
    ...ENTRY_POINTS.filter((e) => e !== 'mcp' && e !== 'workflows').map((entry) => ({
      name: 'entry-point-sideways',
      severity: 'error',
      comment: `${entry}/ may import core/ and platform/, not another entry point.`,
      from: { path: `^${entry}/` },
      to: { path: above(...ENTRY_POINTS.filter((e) => e !== entry), 'scripts', 'bench', 'test') },
    })),
    {
      name: 'entry-point-sideways',
      severity: 'error',
      comment: 'workflows/ import only their activities (types) and core/; never another entry point.',
      from: { path: '^workflows/' },
      to: { path: above(...ENTRY_POINTS.filter((e) => e !== 'workflows' && e !== 'activities'), 'scripts') },
    },
    {
      name: 'entry-point-sideways',
      severity: 'error',
      comment: 'mcp/ may import the API and gateway modules in MCP_MAY_IMPORT (it hosts both in process), no others.',
      from: { path: '^mcp/' },
      to: {
        path: above(...ENTRY_POINTS.filter((e) => e !== 'mcp'), 'scripts', 'bench', 'test'),
        pathNot: exact(MCP_MAY_IMPORT),
      },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|\\.tools|\\.data|\\.cache|dist|coverage|bench/results)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};
