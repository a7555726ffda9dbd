/**
 * The response-validation hook: checks a response (method, path, status, content type, body) against the OpenAPI
 * document (api/openapi/document.ts), compiled with Ajv for JSON Schema 2020-12. An undocumented operation or status,
 * an undocumented media type or a JSON body that does not match its schema throws with a clear message.
 * Paths the document does not describe (loopback upstreams, the agent-tool server) are skipped.
 * `http()` (test/helpers/http.ts) runs it on every response, so every integration test checks the document.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { openApiDocument } from '../../api/openapi/document.js';
import { isUndocumented } from '../../api/openapi/operations.js';

type Json = Record<string, any>;

export interface ResponseSample {
  method: string;
  /** The request path, with or without a query string. */
  path: string;
  status: number;
  contentType: string | null;
  /** Parsed JSON, or the text; undefined for an empty body. */
  body: unknown;
}

export class OpenApiMismatchError extends Error {
  override name = 'OpenApiMismatchError';
}

interface Route {
  template: string;
  re: RegExp;
  literals: number;
}

const escapePointer = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');

/** `{param}` matches one segment; a trailing `{path}` matches the rest, slashes included (the gateway's proxy). */
function compileTemplate(template: string): Route {
  const parts = template.split('/');
  const greedy = parts[parts.length - 1] === '{path}';
  if (greedy) parts.pop();
  const isParam = (part: string) => /^\{[^}]+\}$/.test(part);
  const source = parts.map((p) => (isParam(p) ? '[^/]+' : p.replace(/[.*+?^$()|[\]\\]/g, '\\$&'))).join('/');
  return {
    template,
    re: new RegExp(`^${source}${greedy ? '(?:/[^?#]*)?' : ''}$`),
    literals: parts.filter((p) => !isParam(p)).length,
  };
}

export class OpenApiValidator {
  private readonly ajv: Ajv2020;
  private readonly routes: Route[];
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(private readonly doc: Json) {
    this.ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
    addFormats.default(this.ajv);
    this.ajv.addSchema(doc, 'openapi.json');
    // The most literal template first: `/v1/keys/{id}` must not shadow `/v1/openapi.json`-like literals.
    this.routes = Object.keys(doc.paths as Json)
      .map(compileTemplate)
      .sort((a, b) => b.literals - a.literals);
  }

  /** The documented path template for a request path, or undefined (not ours: skipped). */
  match(path: string): string | undefined {
    const pathname = path.split(/[?#]/, 1)[0]!;
    if (isUndocumented(pathname)) return undefined; // left out of the document on purpose (UNDOCUMENTED_PREFIXES)
    return this.routes.find((r) => r.re.test(pathname))?.template;
  }

  /** Throws OpenApiMismatchError when the response is not what the document says. */
  validate(sample: ResponseSample): void {
    const template = this.match(sample.path);
    if (!template) return;
    const where = `${sample.method.toUpperCase()} ${sample.path} → ${sample.status}`;
    const item = this.doc.paths[template] as Json;
    let method = sample.method.toLowerCase();
    if (method === 'head' && !item.head) method = 'get';
    const op = item[method] as Json | undefined;
    if (!op) {
      // A method the path does not serve: the shared 404/405 refusal in the failure envelope.
      if (sample.status === 405 || sample.status === 404) {
        return this.check('#/components/schemas/FailureEnvelope', sample, where);
      }
      throw new OpenApiMismatchError(
        `${where}: ${sample.method.toUpperCase()} ${template} is not in the OpenAPI document.`,
      );
    }
    let response = op.responses[String(sample.status)] as Json | undefined;
    if (!response) {
      throw new OpenApiMismatchError(
        `${where}: status ${sample.status} is not documented for ${method.toUpperCase()} ${template} ` +
          `(documented: ${Object.keys(op.responses).join(', ')}). Body: ${preview(sample.body)}`,
      );
    }
    let pointer = `#/paths/${escapePointer(template)}/${method}/responses/${sample.status}`;
    if (typeof response.$ref === 'string') {
      pointer = response.$ref;
      response = this.resolve(response.$ref);
    }
    const content = response.content as Json | undefined;
    if (!content || sample.body === undefined || sample.method.toUpperCase() === 'HEAD') return;
    const type = (sample.contentType ?? '').split(';', 1)[0]!.trim().toLowerCase();
    const key = mediaKey(Object.keys(content), type);
    if (!key) {
      throw new OpenApiMismatchError(
        `${where}: content type "${type}" is not documented (documented: ${Object.keys(content).join(', ')}).`,
      );
    }
    if (!content[key].schema || key !== 'application/json') return;
    this.check(`${pointer}/content/${escapePointer(key)}/schema`, sample, where);
  }

  private resolve(ref: string): Json {
    let node: any = this.doc;
    for (const part of ref.replace(/^#\//, '').split('/')) node = node[part.replace(/~1/g, '/').replace(/~0/g, '~')];
    return node as Json;
  }

  private check(pointer: string, sample: ResponseSample, where: string): void {
    const ref = pointer.startsWith('#') ? `openapi.json${pointer}` : pointer;
    let validate = this.compiled.get(ref);
    if (!validate) {
      validate = this.ajv.compile({ $ref: ref });
      this.compiled.set(ref, validate);
    }
    if (validate(sample.body)) return;
    const errors = (validate.errors ?? [])
      .slice(0, 8)
      .map((e) => `  ${e.instancePath || '(body)'} ${e.message ?? ''} ${JSON.stringify(e.params)}`)
      .join('\n');
    throw new OpenApiMismatchError(
      `${where}: the body does not match the OpenAPI document (${pointer}):\n${errors}\nBody: ${preview(sample.body)}`,
    );
  }
}

function mediaKey(keys: string[], type: string): string | undefined {
  if (keys.includes(type)) return type;
  const [major] = type.split('/');
  return keys.find((k) => k === `${major}/*`) ?? keys.find((k) => k === '*/*');
}

function preview(body: unknown): string {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return (text ?? '').slice(0, 600);
}

let shared: OpenApiValidator | undefined;

/** The validator of the served document (built once per test process). */
export function documentValidator(): OpenApiValidator {
  shared ??= new OpenApiValidator(openApiDocument().json);
  return shared;
}
