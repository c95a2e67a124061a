import { describe, it } from 'vitest'
import { describeHostConformance } from '@planmode/host-conformance'
import { referenceHost } from './support/reference-host.js'

describeHostConformance('@planmode/host', referenceHost, { describe, it })
