/**
 * The public conformance kit of planmode: run it from a host's own tests and
 * learn, by name, which host duty (SPEC §16) or host-dependent plan-layer
 * behaviour the host breaks.
 *
 * @remarks
 * The kit builds a scripted AI SDK model, hands it to the host factory,
 * loads the plan layers (plan-core, plan-policy, plan-commands, plan-tool,
 * plan-projection's `plan` and `planHistory`) into the host's context and
 * drives the host through the seams.
 *
 * @packageDocumentation
 */
export { createConformanceModel } from '@planmode/scripted-model'
export type { ConformanceModel, ConformanceReply, ConformanceResponse, ConformanceToolCall } from '@planmode/scripted-model'
export { describeHostConformance } from './describe-host-conformance.js'
export type { DescribeHostConformanceOptions, TestRunner } from './describe-host-conformance.js'
export { HOST_DUTIES } from './duties.js'
export type { HostDuty, HostDutyInfo } from './duties.js'
export type { HandoffDuty } from './handoff-duties.js'
export type { GuidanceDuty } from './guidance-duties.js'
export type { ConformanceEnvironment, ConformanceHost, HostConformanceOptions, HostFactory } from './host-adapter.js'
export { hostConformanceCases } from './host-conformance-cases.js'
export type { HostConformanceCase } from './host-conformance-cases.js'
export { BROKEN_HOST_VARIANTS } from './broken-host-variants.js'
export type { BrokenHostVariant } from './broken-host-variant.js'
export { HostConformanceError } from './host-conformance-error.js'
export { clientAdapterCases } from './cases/client-adapter-cases.js'
export type { ClientAdapterCase } from './cases/client-adapter-cases.js'
export { ClientAdapterConformanceError } from './client-adapter.js'
export type {
  ClientAdapter,
  ClientAdapterDuty,
  ClientAdapterFactory,
  ClientAnswer,
  ClientQuestion,
  ServedClient,
  ClientSession,
} from './client-adapter.js'
export { BROKEN_CLIENT_ADAPTER_VARIANTS } from './client-adapter-variants.js'
export type { BrokenClientAdapterVariant } from './client-adapter-variants.js'
