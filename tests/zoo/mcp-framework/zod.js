// The zod the framework itself imports (its own copy, 3.x: it reads
// schemas with instanceof, so the top-level zod 4 or zod's CommonJS build
// would not do): the ESM entry of the zod that mcp-framework resolves.
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";

const require = createRequire(import.meta.resolve("mcp-framework"));
const dir = dirname(require.resolve("zod/package.json"));
const entry = require("zod/package.json").exports["."].import;
export const { z } = await import(pathToFileURL(join(dir, entry)).href);
