import { describe, it } from 'vitest'
import { describeHostConformance } from '@planmode/host-conformance'
import { ownHostFactory } from './own-host-factory.js'

// The example does not carry out handoffs (SPEC §18): it has one model and opens no session by itself.
describeHostConformance('examples/own-host', ownHostFactory, { describe, it, skip: ['handoff-model', 'handoff-fresh'] })
