/// A transformer that also sees the key the value belongs to.
public protocol ConditionedOneWayTransformer<KeyType, TypeIn, TypeOut>: Sendable {
    /// The key the value belongs to.
    associatedtype KeyType: Sendable
    /// What the transformer takes.
    associatedtype TypeIn: Sendable
    /// What the transformer gives.
    associatedtype TypeOut: Sendable
    /// `value` (the value of `key`) transformed; throw ``FetchError/conditionNotSatisfied``
    /// to decline it, which a level treats as a skip, not a failure.
    func conditionalTransform(key: KeyType, value: TypeIn) async throws -> TypeOut
}

/// A key-aware transformer that can also go back.
public protocol ConditionedTwoWayTransformer<KeyType, TypeIn, TypeOut>: ConditionedOneWayTransformer {
    /// `value` (the value of `key`) turned back; a ``FetchError`` declines it, as forwards.
    func conditionalInverseTransform(key: KeyType, value: TypeOut) async throws -> TypeIn
}

/// A ``ConditionedOneWayTransformer`` from a closure receiving `(key, value)`.
public struct ConditionedOneWayTransformationBox<KeyType: Sendable, TypeIn: Sendable, TypeOut: Sendable>:
    ConditionedOneWayTransformer
{
    @usableFromInline let closure: @Sendable (KeyType, TypeIn) async throws -> TypeOut

    /// A transformer calling `conditionalTransformClosure` with the key and the value.
    public init(conditionalTransformClosure: @escaping @Sendable (KeyType, TypeIn) async throws -> TypeOut) {
        self.closure = conditionalTransformClosure
    }

    /// Adapts a plain transformer; the key is ignored.
    public init<T: OneWayTransformer>(transformer: T) where T.TypeIn == TypeIn, T.TypeOut == TypeOut {
        self.closure = { _, value in try await transformer.transform(value) }
    }

    /// The closure's result for `key` and `value`.
    @inlinable
    public func conditionalTransform(key: KeyType, value: TypeIn) async throws -> TypeOut {
        try await closure(key, value)
    }
}

/// A ``ConditionedTwoWayTransformer`` from two closures receiving `(key, value)`.
public struct ConditionedTwoWayTransformationBox<KeyType: Sendable, TypeIn: Sendable, TypeOut: Sendable>:
    ConditionedTwoWayTransformer
{
    @usableFromInline let forward: @Sendable (KeyType, TypeIn) async throws -> TypeOut
    @usableFromInline let inverse: @Sendable (KeyType, TypeOut) async throws -> TypeIn

    /// A transformer calling `conditionalTransformClosure` forwards and
    /// `conditionalInverseTransformClosure` back, each with the key.
    public init(
        conditionalTransformClosure: @escaping @Sendable (KeyType, TypeIn) async throws -> TypeOut,
        conditionalInverseTransformClosure: @escaping @Sendable (KeyType, TypeOut) async throws -> TypeIn
    ) {
        self.forward = conditionalTransformClosure
        self.inverse = conditionalInverseTransformClosure
    }

    /// Adapts a plain two-way transformer; the key is ignored.
    public init<T: TwoWayTransformer>(transformer: T) where T.TypeIn == TypeIn, T.TypeOut == TypeOut {
        self.forward = { _, value in try await transformer.transform(value) }
        self.inverse = { _, value in try await transformer.inverseTransform(value) }
    }

    /// The forward closure's result for `key` and `value`.
    @inlinable
    public func conditionalTransform(key: KeyType, value: TypeIn) async throws -> TypeOut {
        try await forward(key, value)
    }

    /// The inverse closure's result for `key` and `value`.
    @inlinable
    public func conditionalInverseTransform(key: KeyType, value: TypeOut) async throws -> TypeIn {
        try await inverse(key, value)
    }

    /// The same transformer with its directions swapped.
    public func invert() -> ConditionedTwoWayTransformationBox<KeyType, TypeOut, TypeIn> {
        ConditionedTwoWayTransformationBox<KeyType, TypeOut, TypeIn>(
            conditionalTransformClosure: inverse,
            conditionalInverseTransformClosure: forward
        )
    }
}
