// A module of the bundle, required by handler.js as require('./lib/greet').
exports.greet = (name) => `Hello, ${name}!`;
