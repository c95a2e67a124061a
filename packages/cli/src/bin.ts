import { runPlanmode } from './run.js'

// The `planmode` executable: the exit code is the command's (see EXIT_CODES).
process.exitCode = await runPlanmode(process.argv.slice(2), process)
