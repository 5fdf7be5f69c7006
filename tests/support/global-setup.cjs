module.exports = require('./temp-dir.cjs').setup;
