// The reference validator for generated documents: ajv (draft 2020-12) with ajv-formats, as tests use it.
import Ajv2020Module from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";

// Both packages are CommonJS with `module.exports = X; exports.default = X`: under NodeNext the default import is
// typed as the module, while at runtime it may be either; `.default` when present works for both.
type Ajv2020Class = typeof Ajv2020Module.default;
type AddFormats = typeof addFormatsModule.default;
const Ajv2020: Ajv2020Class = (Ajv2020Module as unknown as { default?: Ajv2020Class }).default ?? (Ajv2020Module as unknown as Ajv2020Class);
const addFormats: AddFormats = (addFormatsModule as unknown as { default?: AddFormats }).default ?? (addFormatsModule as unknown as AddFormats);

/** A fresh ajv for draft 2020-12 with the standard formats (full mode). */
export function newValidator(): InstanceType<Ajv2020Class> {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  return ajv;
}
