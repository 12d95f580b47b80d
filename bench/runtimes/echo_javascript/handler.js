'use strict';
// The echo of bench/runtimes.sh: returns the event it was given.
//
// Toolgate runs it as a JavaScript tool; bench/runtimes/workerd/worker.js imports this same file,
// so both sides of the comparison run the same handler.

module.exports.service_handler = function (event, context) {
  return { statusCode: 200, body: event };
};
