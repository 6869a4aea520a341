// After `npm install` in this folder (what a plugin install from a git URL runs), the package's
// sources one folder up resolve their imports from ../node_modules: when the repository has none,
// link it to this folder's. An existing ../node_modules is left as it is.
const fs = require("fs");
const path = require("path");
const up = path.join(__dirname, "..", "node_modules");
const here = path.join(__dirname, "node_modules");
if (!fs.existsSync(up) && fs.existsSync(here)) {
    fs.symlinkSync(path.join("plugin", "node_modules"), up, "dir");
    console.log(`linked ${up} -> plugin/node_modules`);
}
