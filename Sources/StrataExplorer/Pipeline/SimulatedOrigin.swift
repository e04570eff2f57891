import Foundation
import Strata

/// Errors of the simulated origin.
public struct SimulatedOriginError: Error, CustomStringConvertible, Equatable {
    public let key: String
    public var description: String { "simulated origin failure" }
}

/// A stand-in for a slow, occasionally failing backend: every key exists
/// (except keys starting with `missing:`), answers after `latency ± jitter`
/// (a real, cancellable sleep) with deterministic bytes.
public struct SimulatedOrigin: Fetcher {
    public let latency: Duration
    public let jitter: Duration
    public let failureRate: Double
    public let valueSize: Int

    /// The largest `valueSize` a pipeline can ask for: 64 MiB. Every get
    /// builds a fresh value of this size, so a size read from a file must be
    /// bounded, or one get could exhaust memory (or trap reserving it).
    public static let maxValueSize = 64 << 20

    public init(latency: Duration, jitter: Duration, failureRate: Double, valueSize: Int) {
        self.latency = latency
        self.jitter = jitter
        self.failureRate = failureRate
        self.valueSize = valueSize
    }

    public var name: String { "origin" }

    public func getIfPresent(_ key: String) async throws -> Data? {
        let jitterNs = jitter.nanoseconds
        let offset = jitterNs > 0 ? Int64.random(in: -jitterNs...jitterNs) : 0
        let delay = max(latency.nanoseconds + offset, 0)
        if delay > 0 { try await Task.sleep(for: .nanoseconds(delay)) }
        if key.hasPrefix("missing:") { return nil }
        if failureRate > 0 && Double.random(in: 0..<1) < failureRate { throw SimulatedOriginError(key: key) }
        return Self.value(for: key, size: valueSize)
    }

    /// The bytes the origin serves for `key`.
    public static func value(for key: String, size: Int) -> Data {
        let seed = Array("origin value for \(key); ".utf8)
        var bytes = [UInt8]()
        bytes.reserveCapacity(size)
        while bytes.count < size { bytes += seed.prefix(size - bytes.count) }
        return Data(bytes)
    }
}
