import { describe, it } from 'vitest'
import { describeHostConformance } from '@planmode/host-conformance'
import { ownHostFactory } from './own-host-factory.js'

describeHostConformance('examples/own-host', ownHostFactory, { describe, it })
