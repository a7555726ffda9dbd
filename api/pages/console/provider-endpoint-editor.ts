/**
 * Console · Provider · the endpoint editor (issue 31): add an endpoint, or edit one (method, path, summary, its
 * path/query/body parameters as rows with a type, required, a description and an example, or the input as a raw JSON
 * Schema, and the output schema), without JavaScript. The rows make the input schema in the OpenAPI import's shape
 * (provider-params.ts); a raw schema is checked as JSON (line and column) and by Ajv as a JSON Schema
 * (provider-json.ts). A new method or path is a removal plus an addition (the form says so). On a live API the change
 * is staged in its open revision. Saving answers 303 to the API's page; a refusal re-renders the form with what was
 * typed and each message beside its field; "More parameter rows" re-renders it with more blank rows, saving nothing.
 */
import { ENDPOINT_METHODS } from '../../../db/entities/index.js';
import { NotFoundError, type AppError } from '../../../core/errors.js';
import { escapeHtml } from '../../../core/html.js';
import { EndpointPatchBody } from '../../../core/providers/endpoint-changes.schemas.js';
import { EndpointInput } from '../../../core/providers/providers.schemas.js';
import type { SessionPrincipal } from '../../../core/sessions/sessions.service.js';
import type { Services } from '../../../platform/services.js';
import type { AppContext } from '../../context.js';
import {
  FormError,
  fieldMessage,
  fixable,
  type FieldSpec,
  type FormFields,
  type FormProblems,
  invalidAttrs,
  problemSummary,
} from '../form-errors.js';
import { csrfToken, hidden, paramOf, readForm } from '../forms.js';
import { parseForm, seeOther } from './forms.js';
import { providerPage, requireProvider } from './provider-common.js';
import { dollarsToCents, options } from './provider-forms.js';
import { readJsonSchema } from './provider-json.js';
import {
  emptyRow,
  exampleCall,
  MAX_PARAM_ROWS,
  PARAM_PLACES,
  PARAM_TYPES,
  type ParamRow,
  readRows,
  rowId,
  rowName,
  rowsFromSchema,
  sameJson,
  schemaFromRows,
} from './provider-params.js';
import { endpointRows, openRevision, type EndpointRow } from './provider-revision.js';
import { consolePage, type ConsoleView } from './shell.js';

/** What the form shows: the endpoint's fields as text, and its parameter rows. */
interface Values {
  method: string;
  path: string;
  summary: string;
  price: string;
  schema_mode: 'rows' | 'raw';
  input_schema: string;
  output_schema: string;
  rows: ParamRow[];
}

interface EditorState {
  values: Values;
  problems?: FormProblems;
  /** Blank rows to add below the typed ones ("More parameter rows"). */
  extraRows?: number;
  status: number;
}

/**
 * The editor's form body: two JSON Schemas of up to 64 KB each, URL-encoded (up to three bytes a character for
 * JSON's punctuation), and the rows.
 */
const EDITOR_FORM_LIMIT = 512 * 1024;

const INPUT_FIELD: FieldSpec = { id: 'ep-input_schema', label: 'Input JSON Schema' };
const OUTPUT_FIELD: FieldSpec = { id: 'ep-output_schema', label: 'Output JSON Schema' };

/** The form's fields by the REST schemas' keys (form-errors.ts); a taken method and path is the path's problem. */
export const EDITOR_FIELDS: FormFields = {
  method: { id: 'ep-method', label: 'Method' },
  path: { id: 'ep-path', label: 'Path' },
  summary: { id: 'ep-summary', label: 'Summary' },
  price_cents: { id: 'ep-price', label: 'Price' },
  input_schema: INPUT_FIELD,
  output_schema: OUTPUT_FIELD,
};

const apiPath = (apiId: string) => `/console/provider/apis/${encodeURIComponent(apiId)}`;
const pretty = (schema: Record<string, unknown> | null) => (schema ? JSON.stringify(schema, null, 2) : '');

function initialValues(e: EndpointRow | undefined): Values {
  if (!e) {
    const blank = { method: 'GET', path: '', summary: '', price: '', input_schema: '', output_schema: '' };
    return { ...blank, schema_mode: 'rows', rows: [] };
  }
  const rows = rowsFromSchema(e.input_schema, e.path);
  return {
    method: e.method,
    path: e.path,
    summary: e.summary ?? '',
    price: '',
    schema_mode: rows ? 'rows' : 'raw',
    input_schema: pretty(e.input_schema),
    output_schema: pretty(e.output_schema),
    rows: rows ?? [],
  };
}

function typedValues(body: Record<string, string>): Values {
  return {
    method: body.method ?? 'GET',
    path: body.path ?? '',
    summary: body.summary ?? '',
    price: body.price ?? '',
    schema_mode: body.schema_mode === 'raw' ? 'raw' : 'rows',
    input_schema: body.input_schema ?? '',
    output_schema: body.output_schema ?? '',
    rows: readRows(body),
  };
}

function paramRow(row: ParamRow, i: number, p?: FormProblems): string {
  const n = i + 1;
  const text = (part: 'name' | 'description' | 'example', size: number, max: number) =>
    `<label class="visually-hidden" for="${rowId(i, part)}">Parameter ${n} ${part}</label><input id="${rowId(i, part)}" name="${rowName(i, part)}" size="${size}" maxlength="${max}" value="${escapeHtml(row[part])}"${invalidAttrs(p, rowId(i, part))}>${fieldMessage(p, rowId(i, part))}`;
  const select = (part: 'in' | 'type', list: readonly string[], label: string) =>
    `<label class="visually-hidden" for="${rowId(i, part)}">Parameter ${n} ${label}</label><select id="${rowId(i, part)}" name="${rowName(i, part)}"${invalidAttrs(p, rowId(i, part))}>${options(
      list.map((v) => ({ value: v, label: v })),
      row[part],
    )}</select>${fieldMessage(p, rowId(i, part))}`;
  return `<tr><td>${text('name', 14, 100)}</td><td>${select('in', PARAM_PLACES, 'place')}</td><td>${select('type', PARAM_TYPES, 'type')}</td>
<td><input type="checkbox" id="${rowId(i, 'required')}" name="${rowName(i, 'required')}" value="yes"${row.required ? ' checked' : ''}><label class="visually-hidden" for="${rowId(i, 'required')}">Parameter ${n} required</label></td>
<td>${text('description', 24, 300)}</td><td>${text('example', 14, 2000)}</td></tr>`;
}

function paramsFieldset(values: Values, extra: number, p?: FormProblems): string {
  const pad = Math.max(2, 3 - values.rows.length) + extra;
  const rows = [...values.rows, ...Array.from({ length: pad }, emptyRow)].slice(0, MAX_PARAM_ROWS);
  return `<fieldset class="panel"><legend>Parameters</legend>
<p id="params-help" class="muted">One row per parameter. Place: <code>path</code> (a <code>{name}</code> in the path: always required; one without a row is a string), <code>query</code> or <code>body</code> (a field of the JSON body). The example must fit the type (a list or object as JSON); a path parameter's example is what the smoke test calls. Clear a row's name to remove it.</p>
<input type="hidden" name="rows" value="${rows.length}">
<table aria-describedby="params-help"><caption class="visually-hidden">Parameters</caption><thead><tr><th scope="col">Name</th><th scope="col">Place</th><th scope="col">Type</th><th scope="col">Required</th><th scope="col">Description</th><th scope="col">Example</th></tr></thead>
<tbody>${rows.map((r, i) => paramRow(r, i, p)).join('')}</tbody></table>
<p><button type="submit" name="intent" value="rows">More parameter rows</button></p></fieldset>`;
}

function schemaFieldset(values: Values, p?: FormProblems): string {
  const checked = (mode: Values['schema_mode']) => (values.schema_mode === mode ? ' checked' : '');
  return `<fieldset class="panel"><legend>Input schema</legend>
<p><input type="radio" id="mode-rows" name="schema_mode" value="rows"${checked('rows')}> <label for="mode-rows" class="inline-label">Made from the parameter rows above</label></p>
<p><input type="radio" id="mode-raw" name="schema_mode" value="raw"${checked('raw')}> <label for="mode-raw" class="inline-label">This JSON Schema (advanced: any JSON Schema, checked when you save)</label></p>
<label for="ep-input_schema">Input JSON Schema</label><textarea id="ep-input_schema" name="input_schema" rows="10" cols="80"${invalidAttrs(p, INPUT_FIELD.id, 'input-help')}>${escapeHtml(values.input_schema)}</textarea>${fieldMessage(p, INPUT_FIELD.id)}
<p id="input-help" class="muted">Shown as saved. Used only when “This JSON Schema” is chosen; the shape that agents and the smoke test read best is <code>{"type":"object","properties":{"path":{…},"query":{…},"body":{…}}}</code>, as the rows make it.</p></fieldset>
<label for="ep-output_schema">Output JSON Schema (optional: what a 2xx answer holds)</label><textarea id="ep-output_schema" name="output_schema" rows="6" cols="80"${invalidAttrs(p, OUTPUT_FIELD.id)}>${escapeHtml(values.output_schema)}</textarea>${fieldMessage(p, OUTPUT_FIELD.id)}`;
}

function mainFields(values: Values, isNew: boolean, p?: FormProblems): string {
  const v = (k: 'path' | 'summary' | 'price') => escapeHtml(values[k]);
  const methods = options(
    ENDPOINT_METHODS.map((m) => ({ value: m, label: m })),
    values.method.toUpperCase(),
  );
  const moveNote = isNew
    ? ''
    : ' Changing the method or path removes this endpoint and adds a new one (a new id, the same price and schemas): its callers get 410 endpoint_removed (on a live API after the notice).';
  const price = isNew
    ? `<label for="ep-price">Price per call in dollars (optional, 0 when empty)</label><input id="ep-price" name="price" inputmode="decimal" size="8" value="${v('price')}"${invalidAttrs(p, 'ep-price')}>${fieldMessage(p, 'ep-price')}`
    : '';
  return `<label for="ep-method">Method</label><select id="ep-method" name="method"${invalidAttrs(p, 'ep-method')}>${methods}</select>${fieldMessage(p, 'ep-method')}
<label for="ep-path">Path</label><input id="ep-path" name="path" required maxlength="500" size="50" value="${v('path')}" placeholder="/forecast/{city}"${invalidAttrs(p, 'ep-path', 'path-help')}>${fieldMessage(p, 'ep-path')}
<p id="path-help" class="muted">Under the upstream base URL, like <code>/forecast/{city}</code>: a <code>{name}</code> is a path parameter.${moveNote}</p>
<label for="ep-summary">Summary (optional)</label><input id="ep-summary" name="summary" maxlength="200" size="60" value="${v('summary')}"${invalidAttrs(p, 'ep-summary')}>${fieldMessage(p, 'ep-summary')}
${price}`;
}

/** The example call the schema describes (from the typed rows when they parse, else as saved). */
function exampleSection(values: Values, saved: EndpointRow | undefined): string {
  let schema: Record<string, unknown> | null = saved?.input_schema ?? null;
  try {
    schema = values.schema_mode === 'rows' ? schemaFromRows(values.rows, values.path) : schema;
  } catch {
    // A refused row: the saved schema's example.
  }
  const call = exampleCall(values.method.toUpperCase(), values.path || '/', schema);
  return `<section aria-labelledby="example-h"><h2 id="example-h">Example call</h2>
<p class="muted">What a caller sends with the examples above (after the gateway's <code>/v1/proxy/{slug}</code>).</p>
<pre><code>${escapeHtml(call.line)}${call.body ? `\n\n${escapeHtml(call.body)}` : ''}</code></pre></section>`;
}

/** The API, its open revision and the endpoint being edited (as it will be), or 404. */
async function editorContext(services: Services, person: SessionPrincipal, apiId: string, endpointId: string | null) {
  const api = await services.providers.get(person, apiId);
  const revision = await openRevision(services, person, api);
  const endpoint = endpointId ? endpointRows(api, revision).find((e) => e.endpoint_id === endpointId) : undefined;
  if (endpointId && (!endpoint || endpoint.state === 'removing' || endpoint.state === 'sunset')) {
    throw new NotFoundError(`No endpoint ${endpointId} to edit on this API (it is removed, or its removal is staged).`);
  }
  return { api, revision, endpoint };
}

/** The editor page: a new endpoint (`endpointId` null) or one to change. */
export async function editorView(
  services: Services,
  ctx: AppContext,
  person: SessionPrincipal,
  endpointId: string | null,
  state?: EditorState,
): Promise<ConsoleView> {
  const { api, revision, endpoint } = await editorContext(services, person, paramOf(ctx, 'id'), endpointId);
  const isNew = endpointId === null;
  const title = isNew ? 'Add an endpoint' : `Edit ${endpoint!.method} ${endpoint!.path}`;
  const back = `<p><a href="${apiPath(api.api_id)}">← ${escapeHtml(api.name)}</a></p>`;
  if (api.status === 'archived') {
    return providerPage(
      ctx,
      title,
      '',
      409,
      `${back}<p>This API is archived: restore it to a draft on its page to change its endpoints.</p>`,
    );
  }
  const values = state?.values ?? initialValues(endpoint);
  const p = state?.problems;
  const live =
    api.status === 'live'
      ? `<p class="banner warn">This API is live: saving stages the change in its ${revision ? `open revision ${revision.number}` : 'revision'}; callers see it only when you publish the revision on the API's page.</p>`
      : '';
  const action = isNew
    ? `${apiPath(api.api_id)}/endpoints`
    : `${apiPath(api.api_id)}/endpoints/${encodeURIComponent(endpointId)}`;
  return providerPage(
    ctx,
    title,
    '',
    state?.status ?? 200,
    `${back}${live}${problemSummary(p)}
<form method="post" action="${action}">${hidden('csrf', csrfToken(ctx))}
${mainFields(values, isNew, p)}
${paramsFieldset(values, state?.extraRows ?? 0, p)}
${schemaFieldset(values, p)}
<p><button type="submit">${isNew ? 'Add endpoint' : 'Save endpoint'}</button> <a href="${apiPath(api.api_id)}">Cancel</a></p></form>
${exampleSection(values, endpoint)}`,
  );
}

/** Run `fn`; a refusal's messages join `problems` (so every field's problem shows at once) and `fallback` is used. */
function gather<T>(problems: Record<string, string>, fn: () => T, fallback: T): T {
  try {
    return fn();
  } catch (err) {
    if (!(err instanceof FormError)) throw err;
    Object.assign(problems, err.fields);
    return fallback;
  }
}

type Fields = Pick<EndpointRow, 'method' | 'path' | 'summary' | 'input_schema' | 'output_schema'>;

/** The form's fields, checked (every problem gathered, so each shows beside its field at once). */
function checkedFields(v: Values, problems: Record<string, string>): Fields & { price?: number } {
  const inputSchema = gather(
    problems,
    () =>
      v.schema_mode === 'raw' ? readJsonSchema(v.input_schema, INPUT_FIELD) : schemaFromRows(v.rows, v.path.trim()),
    null,
  );
  const outputSchema = gather(problems, () => readJsonSchema(v.output_schema, OUTPUT_FIELD), null);
  const price = gather(
    problems,
    () => (v.price.trim() ? dollarsToCents(v.price, 'Price', 'ep-price') : undefined),
    undefined,
  );
  return {
    method: v.method,
    path: v.path,
    summary: v.summary.trim() || null,
    input_schema: inputSchema,
    output_schema: outputSchema,
    price,
  };
}

/** Only what differs from the endpoint as it is (or will be): the revision then says what a change changes. */
function patchOf(current: EndpointRow, f: Fields): Partial<Fields> {
  const patch: Partial<Fields> = {};
  if (f.method.toUpperCase() !== current.method) patch.method = f.method;
  if (f.path.trim() !== current.path) patch.path = f.path;
  if (f.summary !== current.summary) patch.summary = f.summary;
  if (!sameJson(f.input_schema, current.input_schema)) patch.input_schema = f.input_schema;
  if (!sameJson(f.output_schema, current.output_schema)) patch.output_schema = f.output_schema;
  return patch;
}

/** Check the form, then add the endpoint or change `current`; the flash code of what happened. */
async function applyEndpoint(
  services: Services,
  person: SessionPrincipal,
  apiId: string,
  current: EndpointRow | undefined,
  v: Values,
): Promise<string> {
  const problems: Record<string, string> = {};
  const { price, ...fields } = checkedFields(v, problems);
  if (!current) {
    const input = gather(
      problems,
      () => parseForm(EndpointInput, { ...fields, price_cents: price }, EDITOR_FIELDS),
      null,
    );
    if (Object.keys(problems).length || !input) throw new FormError(problems);
    const added = await services.providerEndpoints.add(person, apiId, input);
    return added.staged ? 'endpoint-staged' : 'endpoint-added';
  }
  if (Object.keys(problems).length) throw new FormError(problems);
  const changes = patchOf(current, fields);
  if (!Object.keys(changes).length) return 'endpoint-unchanged';
  const patch = parseForm(EndpointPatchBody, changes, EDITOR_FIELDS);
  const changed = await services.providerEndpoints.update(person, apiId, current.endpoint_id, patch);
  const moved = changed.added.length > 0;
  return `${moved ? 'endpoint-moved' : 'endpoint-saved'}${changed.staged ? '-staged' : ''}`;
}

/** POST the editor: "More parameter rows" re-renders; saving answers 303 to the API's page, a refusal the form. */
export function saveEndpoint(services: Services, isNew: boolean) {
  return consolePage(services, 'provider', async (ctx, person) => {
    requireProvider(person);
    const body = await readForm(ctx, EDITOR_FORM_LIMIT);
    const apiId = paramOf(ctx, 'id');
    const endpointId = isNew ? null : paramOf(ctx, 'endpoint_id');
    const values = typedValues(body);
    if (body.intent === 'rows')
      return editorView(services, ctx, person, endpointId, { values, extraRows: 3, status: 200 });
    try {
      const current = endpointId ? (await editorContext(services, person, apiId, endpointId)).endpoint : undefined;
      seeOther(ctx, apiPath(apiId), await applyEndpoint(services, person, apiId, current, values));
    } catch (err) {
      const problems = fixable(err, EDITOR_FIELDS);
      if (!problems) throw err;
      return editorView(services, ctx, person, endpointId, { values, problems, status: (err as AppError).status });
    }
  });
}
