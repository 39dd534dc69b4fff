// Generates workload_schemas.json (beside this file): OpenAPI v3 schemas of apps/v1 DeploymentSpec and
// StatefulSetSpec and everything they reference (PodTemplateSpec, PodSpec, Container, Volume, ...), for the unit
// tests' strict check of rendered pod templates (tests/unit/render_pod_template_schema_test.cpp).
//
// Source: the npm package kubernetes-types, whose .d.ts files are generated from the Kubernetes OpenAPI
// specification of one release (1.30.0 here): every field with its JSON name, optional ("?") or required, and type.
// Regenerate:
//   d=$(mktemp -d) && (cd "$d" && npm install kubernetes-types@1.30.0) &&
//   node tests/unit/schemas/generate_workload_schemas.mjs "$d/node_modules/kubernetes-types" > tests/unit/schemas/workload_schemas.json
//
// Mapping: string/boolean -> type; number -> integer (the core and apps APIs have no floating-point fields);
// "number | string" (IntOrString) and resource.Quantity -> x-kubernetes-int-or-string; string literals -> enum;
// Array<T> -> items; { [name: string]: T } -> additionalProperties; empty interfaces (FieldsV1, RawExtension) ->
// x-kubernetes-preserve-unknown-fields; every other interface -> properties + required, unknown fields rejected by
// the checker (as under fieldValidation=Strict). References stay as {"$ref": "#/definitions/<group.version.Name>"}.
import fs from "node:fs";
import path from "node:path";

const root = process.argv[2];
if (!root) throw new Error("usage: node generate_workload_schemas.mjs <kubernetes-types dir>");

const modules = new Map();  // "core/v1" -> {interfaces: Map(name -> members text), types: Map(name -> type text), imports: Map(name -> module)}

function loadModule(mod) {
  if (modules.has(mod)) return modules.get(mod);
  const text = fs.readFileSync(path.join(root, mod + ".d.ts"), "utf8").replace(/\/\*[\s\S]*?\*\//g, "");
  const m = {interfaces: new Map(), types: new Map(), imports: new Map()};
  for (const imp of text.matchAll(/import\s*\{([^}]*)\}\s*from\s*"([^"]+)";/g)) {
    const target = path.posix.normalize(path.posix.join(path.posix.dirname(mod), imp[2]));
    for (const name of imp[1].split(",").map(s => s.trim()).filter(Boolean)) m.imports.set(name, target);
  }
  for (const it of text.matchAll(/export interface (\w+) \{([\s\S]*?)\n\}/g)) m.interfaces.set(it[1], it[2]);
  for (const ty of text.matchAll(/export type (\w+) = ([^;]+);/g)) m.types.set(ty[1], ty[2].trim());
  modules.set(mod, m);
  return m;
}

// A tiny parser of the type expressions these files use.
function tokenize(s) {
  return s.match(/"[^"]*"|[A-Za-z_$][\w$]*|[<>{}\[\]:;|?,]/g) || [];
}
function parseType(toks, pos) {
  const alts = [];
  let [t, p] = parsePrimary(toks, pos);
  alts.push(t);
  while (toks[p] === "|") {
    [t, p] = parsePrimary(toks, p + 1);
    alts.push(t);
  }
  if (alts.length === 1) return [alts[0], p];
  return [{union: alts}, p];
}
function parsePrimary(toks, p) {
  const tok = toks[p];
  if (tok === "Array") {
    if (toks[p + 1] !== "<") throw new Error("Array without <");
    const [inner, q] = parseType(toks, p + 2);
    if (toks[q] !== ">") throw new Error("Array without >");
    return [{array: inner}, q + 1];
  }
  if (tok === "{") {
    // { [name: string]: T; }
    if (toks[p + 1] !== "[" || toks[p + 3] !== ":" || toks[p + 4] !== "string" || toks[p + 5] !== "]" || toks[p + 6] !== ":")
      throw new Error("unsupported object type at " + toks.slice(p, p + 8).join(" "));
    const [inner, q] = parseType(toks, p + 7);
    let r = q;
    if (toks[r] === ";") r++;
    if (toks[r] !== "}") throw new Error("map without }");
    return [{map: inner}, r + 1];
  }
  if (tok.startsWith('"')) return [{literal: tok.slice(1, -1)}, p + 1];
  return [{name: tok}, p + 1];
}
function parseMembers(body) {
  const toks = tokenize(body);
  const members = [];
  let p = 0;
  while (p < toks.length) {
    if (toks[p] === "readonly" && toks[p + 1] !== ":" && toks[p + 1] !== "?") p++;  // server-set fields
    const name = toks[p];
    let q = p + 1;
    let optional = false;
    if (toks[q] === "?") optional = true, q++;
    if (toks[q] !== ":") throw new Error("expected : after " + name);
    const [type, r] = parseType(toks, q + 1);
    if (toks[r] !== ";") throw new Error("expected ; after member " + name);
    members.push({name, optional, type});
    p = r + 1;
  }
  return members;
}

const definitions = {};
const key = (mod, name) => mod.replace("/", ".") + "." + name;

function schemaOf(type, mod) {
  if (type.union) {
    const kinds = type.union.map(t => t.name || (t.literal !== undefined ? "literal" : "?")).sort().join("|");
    if (kinds === "number|string") return {"x-kubernetes-int-or-string": true};
    if (type.union.every(t => t.literal !== undefined)) return {type: "string", enum: type.union.map(t => t.literal)};
    throw new Error("unsupported union " + JSON.stringify(type));
  }
  if (type.literal !== undefined) return {type: "string", enum: [type.literal]};
  if (type.array) return {type: "array", items: schemaOf(type.array, mod)};
  if (type.map) return {type: "object", additionalProperties: schemaOf(type.map, mod)};
  switch (type.name) {
    case "string": return {type: "string"};
    case "boolean": return {type: "boolean"};
    case "number": return {type: "integer"};
  }
  return refTo(type.name, mod);
}

function refTo(name, mod) {
  const m = loadModule(mod);
  let target = mod;
  if (!m.interfaces.has(name) && !m.types.has(name)) {
    target = m.imports.get(name);
    if (!target) throw new Error(`unknown type ${name} in ${mod}`);
  }
  const tm = loadModule(target);
  if (name === "Quantity") return {"x-kubernetes-int-or-string": true};
  if (tm.types.has(name)) {
    const [t] = parseType(tokenize(tm.types.get(name)), 0);
    return schemaOf(t, target);
  }
  const k = key(target, name);
  if (!(k in definitions)) {
    definitions[k] = null;  // placeholder: breaks cycles
    const members = parseMembers(tm.interfaces.get(name));
    if (members.length === 0) {
      definitions[k] = {type: "object", "x-kubernetes-preserve-unknown-fields": true};
    } else {
      const properties = {};
      const required = [];
      for (const mem of members) {
        properties[mem.name] = schemaOf(mem.type, target);
        if (!mem.optional) required.push(mem.name);
      }
      definitions[k] = {type: "object", properties, ...(required.length ? {required} : {})};
    }
  }
  return {$ref: "#/definitions/" + k};
}

const roots = {};
for (const [mod, name] of [["apps/v1", "DeploymentSpec"], ["apps/v1", "StatefulSetSpec"], ["core/v1", "PodTemplateSpec"]])
  roots[key(mod, name)] = refTo(name, mod);
const sorted = Object.fromEntries(Object.keys(definitions).sort().map(k => [k, definitions[k]]));
const version = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")).version;
process.stdout.write(JSON.stringify({
  source: "npm kubernetes-types@" + version + " (generated from the Kubernetes OpenAPI specification); " +
          "regenerate with tests/unit/schemas/generate_workload_schemas.mjs",
  roots: Object.keys(roots),
  definitions: sorted,
}, null, 1) + "\n");
