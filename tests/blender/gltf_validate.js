// Validate a glTF file with the Khronos glTF validator (npm: gltf-validator), for tests/blender/test_export.py.
// usage: node gltf_validate.js <path to node_modules/gltf-validator> <file.glb|file.gltf>
// Prints the validator's issue summary as JSON; exits 0 when it reports no error, 1 otherwise.
const fs = require("fs");
const path = require("path");
const validator = require(process.argv[2]);
const file = process.argv[3];
const dir = path.dirname(file);
const external = (uri) =>
  new Promise((resolve, reject) => {
    try {
      resolve(new Uint8Array(fs.readFileSync(path.join(dir, decodeURIComponent(uri)))));
    } catch (err) {
      reject(err);
    }
  });
validator
  .validateBytes(new Uint8Array(fs.readFileSync(file)), { uri: path.basename(file), externalResourceFunction: external })
  .then((report) => {
    const issues = report.issues;
    console.log(JSON.stringify({ numErrors: issues.numErrors, numWarnings: issues.numWarnings,
      messages: issues.messages.filter((m) => m.severity <= 1).slice(0, 20) }));
    process.exit(issues.numErrors === 0 ? 0 : 1);
  })
  .catch((err) => {
    console.error(String(err));
    process.exit(2);
  });
