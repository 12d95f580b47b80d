// Validates an order with Ajv, a package from npm that the bundle carries in node_modules.
const Ajv = require('ajv');
const schema = require('./schema.json');

// Compiled once per worker: later calls of a warm worker reuse it.
const validate = new Ajv({allErrors: true}).compile(schema);

exports.service_handler = (event) => {
  if (validate(event)) return {valid: true};
  return {
    valid: false,
    errors: validate.errors.map((e) => `${e.instancePath || '/'} ${e.message}`),
  };
};
