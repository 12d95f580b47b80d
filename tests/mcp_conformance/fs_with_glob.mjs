// node:fs with the glob package's globSync (see node20_fs_glob.mjs).
import fs from 'node:fs';

export * from 'node:fs';
export { globSync } from 'glob';
export default fs;
