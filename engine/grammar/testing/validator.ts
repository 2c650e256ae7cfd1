// The reference validator for generated documents: ajv with ajv-formats (full mode), draft 2020-12 unless the schema
// says draft-07 in `$schema` (as the AI SDK and zod-to-json-schema write), as tests use it.
import Ajv2020Module from "ajv/dist/2020.js";
import AjvModule from "ajv/dist/ajv.js";
import addFormatsModule from "ajv-formats";

// The packages are CommonJS with `module.exports = X; exports.default = X`: under NodeNext the default import is
// typed as the module, while at runtime it may be either; `.default` when present works for both.
type Ajv2020Class = typeof Ajv2020Module.default;
type AjvClass = typeof AjvModule.default;
type AddFormats = typeof addFormatsModule.default;
const Ajv2020: Ajv2020Class = (Ajv2020Module as unknown as { default?: Ajv2020Class }).default ?? (Ajv2020Module as unknown as Ajv2020Class);
const AjvDraft07: AjvClass = (AjvModule as unknown as { default?: AjvClass }).default ?? (AjvModule as unknown as AjvClass);
const addFormats: AddFormats = (addFormatsModule as unknown as { default?: AddFormats }).default ?? (addFormatsModule as unknown as AddFormats);

/** Format names no standard defines that zod writes (the corpus has them): annotations, as the compiler reads them. */
const ANNOTATION_FORMATS = ["cuid", "nanoid", "base64"];

/** A fresh ajv for draft 2020-12 with the standard formats (full mode). */
export function newValidator(): InstanceType<Ajv2020Class> {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  for (const name of ANNOTATION_FORMATS) ajv.addFormat(name, true);
  return ajv;
}

/** A fresh ajv for draft-07 with the standard formats (full mode). */
export function newDraft07Validator(): InstanceType<AjvClass> {
  const ajv = new AjvDraft07({ strict: false, allErrors: true });
  addFormats(ajv);
  for (const name of ANNOTATION_FORMATS) ajv.addFormat(name, true);
  return ajv;
}

/** Whether a schema declares itself draft-07. */
export function isDraft07(schema: unknown): boolean {
  return typeof schema === "object" && schema !== null && /draft-07/.test(String((schema as { $schema?: unknown }).$schema ?? ""));
}

/** The validator a schema asks for by its `$schema`: draft-07, or 2020-12 otherwise. */
export function validatorFor(schema: unknown): InstanceType<Ajv2020Class> | InstanceType<AjvClass> {
  return isDraft07(schema) ? newDraft07Validator() : newValidator();
}
