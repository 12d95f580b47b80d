// A bundle's entry file: requires a package from its node_modules and a file beside it.
const padStart = require('left-pad-lite');
const util = require('./lib/util');

exports.service_handler = (event) => ({
  padded: padStart(event.text, 6),
  twice: util.twice(event.n),
  from: require.resolve('left-pad-lite'),
});
