// Marks dist/cjs as CommonJS (the package itself is "type": "module").
const fs = require('fs');
const path = require('path');
fs.writeFileSync(path.join(__dirname, '..', 'dist', 'cjs', 'package.json'), '{ "type": "commonjs" }\n');
