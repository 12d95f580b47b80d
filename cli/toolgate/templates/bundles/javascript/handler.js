// A Toolgate function packed as a bundle: this directory, minus .toolgateignore's patterns.
//
// require() finds files of the bundle and packages in its node_modules: add dependencies to
// package.json (npm install --save PACKAGE), and `toolgate publish` runs npm ci --omit=dev when
// node_modules is missing. Global modules of the machine that runs the tool are not visible.
const {greet} = require('./lib/greet');

exports.service_handler = (event) => {
  const name = event && typeof event.name === 'string' ? event.name : 'world';
  return {statusCode: 200, body: {message: greet(name)}};
};
