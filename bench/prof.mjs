import { createUpdatePlanTool } from '@planmode/plan-progress'
import { makeLog } from './dist/generator.js'
import { trackedTail } from './dist/run.js'
