/// A transformer that can also go back.
public protocol TwoWayTransformer<TypeIn, TypeOut>: OneWayTransformer {
    /// `value` turned back: `inverseTransform(transform(v))` gives back `v`.
    func inverseTransform(_ value: TypeOut) async throws -> TypeIn
}

/// A ``TwoWayTransformer`` from two closures.
public struct TwoWayTransformationBox<TypeIn: Sendable, TypeOut: Sendable>: TwoWayTransformer {
    @usableFromInline let transformClosure: @Sendable (TypeIn) async throws -> TypeOut
    @usableFromInline let inverseClosure: @Sendable (TypeOut) async throws -> TypeIn

    /// A transformer calling `transform` forwards and `inverseTransform` back.
    public init(
        transform: @escaping @Sendable (TypeIn) async throws -> TypeOut,
        inverseTransform: @escaping @Sendable (TypeOut) async throws -> TypeIn
    ) {
        self.transformClosure = transform
        self.inverseClosure = inverseTransform
    }

    /// The forward closure's result for `value`.
    @inlinable public func transform(_ value: TypeIn) async throws -> TypeOut { try await transformClosure(value) }
    /// The inverse closure's result for `value`.
    @inlinable public func inverseTransform(_ value: TypeOut) async throws -> TypeIn { try await inverseClosure(value) }
}

extension TwoWayTransformer {
    /// `self` then `next`; the inverse runs `next`'s inverse first.
    public func compose<Next: TwoWayTransformer>(_ next: Next) -> TwoWayTransformationBox<TypeIn, Next.TypeOut>
    where Next.TypeIn == TypeOut {
        TwoWayTransformationBox(
            transform: { try await next.transform(try await self.transform($0)) },
            inverseTransform: { try await self.inverseTransform(try await next.inverseTransform($0)) }
        )
    }

    /// The same transformer with its directions swapped.
    public func invert() -> TwoWayTransformationBox<TypeOut, TypeIn> {
        TwoWayTransformationBox(
            transform: { try await self.inverseTransform($0) },
            inverseTransform: { try await self.transform($0) }
        )
    }

    /// Each direction runs only when its condition holds for the input value;
    /// otherwise it throws ``FetchError/conditionNotSatisfied``.
    public func conditioned(
        _ condition: @escaping @Sendable (TypeIn) async throws -> Bool,
        inverseCondition: @escaping @Sendable (TypeOut) async throws -> Bool
    ) -> TwoWayTransformationBox<TypeIn, TypeOut> {
        TwoWayTransformationBox(
            transform: { value in
                guard try await condition(value) else { throw FetchError.conditionNotSatisfied }
                return try await self.transform(value)
            },
            inverseTransform: { value in
                guard try await inverseCondition(value) else { throw FetchError.conditionNotSatisfied }
                return try await self.inverseTransform(value)
            }
        )
    }
}
