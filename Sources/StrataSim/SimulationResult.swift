/// The outcome of replaying one trace against one policy at one capacity.
public struct SimulationResult: Sendable, Equatable, Codable {
    /// The trace's name.
    public var trace: String
    /// Requests replayed.
    public var requests: Int
    /// The capacity.
    public var size: Int
    /// `objects`, or `bytes` for a trace with sizes.
    public var unit: String
    /// The policy's name.
    public var policy: String
    /// Requests that hit.
    public var hits: Int

    /// A result of `hits` out of `requests`.
    public init(trace: String, requests: Int, size: Int, unit: String, policy: String, hits: Int) {
        self.trace = trace
        self.requests = requests
        self.size = size
        self.unit = unit
        self.policy = policy
        self.hits = hits
    }

    /// Hits per request, from 0 to 1.
    public var hitRatio: Double { requests == 0 ? 0 : Double(hits) / Double(requests) }
}
