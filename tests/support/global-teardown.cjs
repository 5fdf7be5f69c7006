module.exports = require('./temp-dir.cjs').teardown;
