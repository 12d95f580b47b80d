// Node 20 has no fs.globSync, which the conformance suite imports from "fs" (it is written for
// Node 22). Registered with `node --import ./node20_fs_glob.mjs`, this resolves the suite's own
// imports of "fs" to fs_with_glob.mjs (node:fs plus the glob package's globSync); every other
// module keeps node:fs. On Node 22 and later it does nothing.
import fs from 'node:fs';
import { register } from 'node:module';

if (typeof fs.globSync !== 'function') register('./node20_fs_glob_hooks.mjs', import.meta.url);
