/// Turns a value into another, possibly asynchronously, possibly failing.
public protocol OneWayTransformer<TypeIn, TypeOut>: Sendable {
    /// What the transformer takes.
    associatedtype TypeIn: Sendable
    /// What the transformer gives.
    associatedtype TypeOut: Sendable
    /// `value` transformed; a failure fails the request (a ``FetchError``
    /// declines the value: the level skips it).
    func transform(_ value: TypeIn) async throws -> TypeOut
}

/// A ``OneWayTransformer`` from a closure.
public struct OneWayTransformationBox<TypeIn: Sendable, TypeOut: Sendable>: OneWayTransformer {
    @usableFromInline let transformClosure: @Sendable (TypeIn) async throws -> TypeOut

    /// A transformer calling `transform`.
    public init(transform: @escaping @Sendable (TypeIn) async throws -> TypeOut) {
        self.transformClosure = transform
    }

    /// The closure's result for `value`.
    @inlinable public func transform(_ value: TypeIn) async throws -> TypeOut { try await transformClosure(value) }
}

extension OneWayTransformer {
    /// `self` then `next`.
    public func compose<Next: OneWayTransformer>(_ next: Next) -> OneWayTransformationBox<TypeIn, Next.TypeOut>
    where Next.TypeIn == TypeOut {
        OneWayTransformationBox { try await next.transform(try await self.transform($0)) }
    }

    /// Transforms only values for which `condition` is `true`; otherwise throws
    /// ``FetchError/conditionNotSatisfied``. The condition sees the input value.
    public func conditioned(
        _ condition: @escaping @Sendable (TypeIn) async throws -> Bool
    ) -> OneWayTransformationBox<TypeIn, TypeOut> {
        OneWayTransformationBox { value in
            guard try await condition(value) else { throw FetchError.conditionNotSatisfied }
            return try await self.transform(value)
        }
    }
}
