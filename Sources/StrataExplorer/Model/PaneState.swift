import Strata

/// What one level's pane shows: a value, so frames are a pure function of it.
public struct PaneState: Equatable, Sendable {
    public var name: String
    /// `memory · pooled · ttl 5m · cond:memory`
    public var summary: String
    public var condition: String?
    public var conditionOn: Bool?
    /// The digit that flips the condition (its toggle's position, from 1).
    public var toggleNumber: Int?
    /// Settings not shown elsewhere in the pane: an origin's latency and failure rate.
    public var configuration: String
    public var stats: StatisticsSnapshot
    public var getsPerSecond: Double
    public var hitsPerSecond: Double
    public var entries: Int?
    public var countLimit: Int?
    public var bytes: Int?
    public var capacity: Int?
    /// Hit ratio per second over the last minute, oldest first (`nil`: no gets that second).
    public var sparkline: [Double?]
    /// Gets per second over the last minute, oldest first.
    public var getsHistory: [Double]
    /// p99 get latency in nanoseconds of each second over the last minute (`nil`: no timed get that second).
    public var p99History: [UInt64?]
    /// Every timed get's latency since the statistics were last reset.
    public var latency: LatencySnapshot?
    public var lastError: String?

    public init(name: String, summary: String, condition: String? = nil, conditionOn: Bool? = nil,
                stats: StatisticsSnapshot = StatisticsSnapshot(), getsPerSecond: Double = 0, hitsPerSecond: Double = 0,
                entries: Int? = nil, countLimit: Int? = nil, bytes: Int? = nil, capacity: Int? = nil,
                sparkline: [Double?] = [], getsHistory: [Double] = [], p99History: [UInt64?] = [],
                latency: LatencySnapshot? = nil, lastError: String? = nil, toggleNumber: Int? = nil, configuration: String = "") {
        self.name = name
        self.summary = summary
        self.condition = condition
        self.conditionOn = conditionOn
        self.stats = stats
        self.getsPerSecond = getsPerSecond
        self.hitsPerSecond = hitsPerSecond
        self.entries = entries
        self.countLimit = countLimit
        self.bytes = bytes
        self.capacity = capacity
        self.sparkline = sparkline
        self.getsHistory = getsHistory
        self.p99History = p99History
        self.latency = latency
        self.lastError = lastError
        self.toggleNumber = toggleNumber
        self.configuration = configuration
    }
}

/// One line of the event log.
public struct EventLine: Equatable, Sendable {
    public var time: String
    public var text: String
    public var isError: Bool

    public init(time: String, text: String, isError: Bool = false) {
        self.time = time
        self.text = text
        self.isError = isError
    }
}
