import { describe, it } from 'vitest'
import { describeHostConformance } from '@planmode/host-conformance'
import { ownHostFactory } from './broken-own-host.js'

describeHostConformance('examples/own-host', ownHostFactory, { describe, it })
