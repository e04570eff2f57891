import Foundation
import OpenCombineShim
import Strata

/// One operation of a level as a Combine publisher (Combine where it exists,
/// OpenCombine elsewhere): it starts once a subscriber asks for a value,
/// then delivers that value and finishes, or fails with the level's error
/// (a get's miss is ``FetchError/valueNotInCache``, as Carlos's `get`).
/// Cancelling the subscription cancels the operation's task. Each
/// subscription runs the operation anew.
public struct CachePublisher<Output: Sendable>: Publisher {
    public typealias Failure = any Error

    let operation: @Sendable () async throws -> Output

    public init(_ operation: @escaping @Sendable () async throws -> Output) {
        self.operation = operation
    }

    public func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == any Error {
        subscriber.receive(subscription: Operation(subscriber, operation))
    }

    /// The subscription: started by the first positive demand, ended by the
    /// result or by `cancel()`.
    ///
    /// `@unchecked Sendable`: its mutable state is only touched under
    /// `lock`; the subscriber (not `Sendable`) is taken out exactly once, by
    /// whichever of delivery and cancellation comes first, and only that
    /// caller touches it again, so its methods are never called concurrently
    /// (Combine's rule).
    final class Operation<S: Subscriber>: Subscription, @unchecked Sendable where S.Input == Output, S.Failure == any Error {
        private let lock = NSLock()
        private var subscriber: S?
        private var task: Task<Void, Never>?
        private var started = false
        private let operation: @Sendable () async throws -> Output

        init(_ subscriber: S, _ operation: @escaping @Sendable () async throws -> Output) {
            self.subscriber = subscriber
            self.operation = operation
        }

        func request(_ demand: Subscribers.Demand) {
            guard demand > .none else { return }
            let start = lock.withLock { () -> Bool in
                guard !started, subscriber != nil else { return false }
                started = true
                return true
            }
            guard start else { return }
            let task = Task { [self] in
                let result: Result<Output, any Error>
                do { result = .success(try await operation()) } catch { result = .failure(error) }
                deliver(result)
            }
            let cancelled = lock.withLock { () -> Bool in
                guard subscriber != nil else { return true }
                self.task = task
                return false
            }
            if cancelled { task.cancel() }
        }

        func cancel() {
            let task = lock.withLock { () -> Task<Void, Never>? in
                subscriber = nil
                defer { self.task = nil }
                return self.task
            }
            task?.cancel()
        }

        private func deliver(_ result: Result<Output, any Error>) {
            let subscriber = lock.withLock { () -> S? in
                defer { self.subscriber = nil; task = nil }
                return self.subscriber
            }
            guard let subscriber else { return }
            switch result {
            case .success(let value):
                _ = subscriber.receive(value)
                subscriber.receive(completion: .finished)
            case .failure(let error):
                subscriber.receive(completion: .failure(error))
            }
        }
    }
}

extension CacheLevel {
    /// A publisher of the value for `key` (see ``CachePublisher``).
    public func getPublisher(_ key: Key) -> CachePublisher<Value> {
        CachePublisher { try await self.get(key) }
    }

    /// A publisher that stores `value` for `key`, then finishes.
    public func setPublisher(_ value: Value, forKey key: Key) -> CachePublisher<Void> {
        CachePublisher { try await self.set(value, forKey: key) }
    }

    /// A publisher that removes `key`, then finishes.
    public func removePublisher(_ key: Key) -> CachePublisher<Void> {
        CachePublisher { try await self.remove(key) }
    }
}
