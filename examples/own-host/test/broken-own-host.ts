// Moved to ./own-host-factory.ts (it holds the unbroken factory). This re-export keeps the old path,
// which docs/own-host.md still names, working until that page points to the new file.
export { ownHostFactory } from './own-host-factory.js'
