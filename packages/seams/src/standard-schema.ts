/**
 * The Standard Schema interface (v1), copied as its authors recommend so
 * that seams has no runtime dependency. zod, valibot, arktype and others
 * implement it.
 *
 * @public
 */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  /** The standard interface: version, vendor and `validate`. */
  readonly '~standard': StandardSchemaV1.Props<Input, Output>
}

/** Members of the `StandardSchemaV1` interface. @public */
export declare namespace StandardSchemaV1 {
  /** The `~standard` property. */
  export interface Props<Input = unknown, Output = Input> {
    /** The version of the standard (1). */
    readonly version: 1
    /** The library that implements it, e.g. `zod`. */
    readonly vendor: string
    /** Checks a value; hosts in this project require a synchronous result. */
    readonly validate: (value: unknown) => Result<Output> | Promise<Result<Output>>
    /** Type-level input and output; never present at run time. */
    readonly types?: Types<Input, Output> | undefined
  }
  /** A validation result. */
  export type Result<Output> = SuccessResult<Output> | FailureResult
  /** A successful validation. */
  export interface SuccessResult<Output> {
    /** The validated (possibly transformed) value. */
    readonly value: Output
    /** Absent on success. */
    readonly issues?: undefined
  }
  /** A failed validation. */
  export interface FailureResult {
    /** Every problem found. */
    readonly issues: ReadonlyArray<Issue>
  }
  /** One problem found by validation. */
  export interface Issue {
    /** What is wrong, for people. */
    readonly message: string
    /** Where in the value, outermost first. */
    readonly path?: ReadonlyArray<PropertyKey | PathSegment> | undefined
  }
  /** A segment of an issue path. */
  export interface PathSegment {
    /** The property or index. */
    readonly key: PropertyKey
  }
  /** Type-level input and output. */
  export interface Types<Input = unknown, Output = Input> {
    /** What the schema accepts. */
    readonly input: Input
    /** What it produces. */
    readonly output: Output
  }
  /** The input type of a schema. */
  export type InferInput<Schema extends StandardSchemaV1> = NonNullable<Schema['~standard']['types']>['input']
  /** The output type of a schema. */
  export type InferOutput<Schema extends StandardSchemaV1> = NonNullable<Schema['~standard']['types']>['output']
}

/**
 * A JSON Schema object (draft 2020-12 subset) as sent to the model in a tool
 * catalog.
 *
 * @public
 */
export interface JsonSchema {
  /** The JSON type the value must have. */
  readonly type?: 'object' | 'string' | 'number' | 'integer' | 'boolean' | 'array' | 'null'
  /** What the value means; the model reads it. */
  readonly description?: string
  /** Schemas of an object's properties. */
  readonly properties?: Readonly<Record<string, JsonSchema>>
  /** Properties an object must have. */
  readonly required?: readonly string[]
  /** The schema of an array's items. */
  readonly items?: JsonSchema
  /** The only values allowed. */
  readonly enum?: readonly unknown[]
  /** The one value allowed. */
  readonly const?: unknown
  /** Whether (or how) properties not listed are allowed. */
  readonly additionalProperties?: boolean | JsonSchema
  /** Any other JSON Schema keyword, passed through to the model. */
  readonly [keyword: string]: unknown
}
