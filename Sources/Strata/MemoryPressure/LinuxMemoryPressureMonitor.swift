import Dispatch
import Foundation
import Synchronization

/// One reading of the machine's (and the process cgroup's) memory.
public struct MemoryReading: Sendable, Equatable {
    /// `MemTotal` from `/proc/meminfo`, in bytes.
    public var total: Int?
    /// `MemAvailable` from `/proc/meminfo`, in bytes.
    public var available: Int?
    /// cgroup v2 `memory.current`, in bytes (nil when absent).
    public var cgroupCurrent: Int?
    /// cgroup v2 `memory.max`, in bytes (nil when unlimited or absent).
    public var cgroupLimit: Int?
    /// cgroup v2 `memory.events` counters (`high`, `max`, `oom`, …).
    public var cgroupEvents: [String: Int] = [:]

    /// A reading of the given figures (`nil`: not known); tests build them by hand.
    public init(total: Int? = nil, available: Int? = nil, cgroupCurrent: Int? = nil,
                cgroupLimit: Int? = nil, cgroupEvents: [String: Int] = [:]) {
        self.total = total
        self.available = available
        self.cgroupCurrent = cgroupCurrent
        self.cgroupLimit = cgroupLimit
        self.cgroupEvents = cgroupEvents
    }

    /// Parses `/proc/meminfo` text (`MemTotal:  16318420 kB` lines). Negative
    /// values are ignored; values too large for bytes in an `Int` are clamped
    /// to `Int.max`.
    public static func parseMeminfo(_ text: String) -> (total: Int?, available: Int?) {
        var total: Int?, available: Int?
        for line in text.split(separator: "\n") {
            let parts = line.split(whereSeparator: { $0 == " " || $0 == ":" })
            guard parts.count >= 2, let value = Int(parts[1]), value >= 0 else { continue }
            var bytes = value
            if parts.count >= 3 && parts[2] == "kB" {
                let (product, overflow) = value.multipliedReportingOverflow(by: 1024)
                bytes = overflow ? Int.max : product
            }
            if parts[0] == "MemTotal" { total = bytes }
            if parts[0] == "MemAvailable" { available = bytes }
        }
        return (total, available)
    }

    /// Parses cgroup v2 `memory.events` text (`high 3` lines); negative counts
    /// are ignored.
    public static func parseCgroupEvents(_ text: String) -> [String: Int] {
        var events: [String: Int] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: " ")
            if parts.count == 2, let value = Int(parts[1]), value >= 0 { events[String(parts[0])] = value }
        }
        return events
    }

    /// Reads the real system: `/proc/meminfo` and, when the process runs in a
    /// cgroup v2 hierarchy, its `memory.current`, `memory.max`, `memory.events`.
    public static func system() -> MemoryReading {
        var reading = MemoryReading()
        if let meminfo = try? String(contentsOfFile: "/proc/meminfo", encoding: .utf8) {
            (reading.total, reading.available) = parseMeminfo(meminfo)
        }
        let base = "/sys/fs/cgroup" + cgroupPath()
        func read(_ file: String) -> String? {
            (try? String(contentsOfFile: base + "/" + file, encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
        // A negative value (which the kernel never writes) is taken as absent.
        func count(_ text: String) -> Int? { Int(text).flatMap { $0 >= 0 ? $0 : nil } }
        reading.cgroupCurrent = read("memory.current").flatMap(count)
        reading.cgroupLimit = read("memory.max").flatMap(count)  // "max" → nil
        reading.cgroupEvents = read("memory.events").map(parseCgroupEvents) ?? [:]
        return reading
    }

    /// This process's cgroup v2 path (`0::/path` in `/proc/self/cgroup`).
    static func cgroupPath() -> String {
        guard let text = try? String(contentsOfFile: "/proc/self/cgroup", encoding: .utf8) else { return "" }
        for line in text.split(separator: "\n") where line.hasPrefix("0::") {
            let path = String(line.dropFirst(3))
            return path == "/" ? "" : path
        }
        return ""
    }
}

/// Watches real memory on Linux and delivers a warning to a ``MemoryPressure``
/// source when:
/// - available memory falls below `availableFraction` of the total (or of the
///   cgroup limit, when one is set): once per crossing, re-armed when it rises
///   back above twice that fraction; or
/// - the cgroup's `high`, `max` or `oom` event counters grow (the kernel is
///   reclaiming or throttling this group).
///
/// Polls every `interval` on its own Dispatch queue; ``poll()`` runs one check
/// by hand (tests inject `reader`).
public final class LinuxMemoryPressureMonitor: Sendable {
    struct State {
        var underPressure = false
        var lastEvents: [String: Int]?
        var timer: (any DispatchSourceTimer)?
    }

    /// The source warnings are delivered to.
    public let source: MemoryPressure
    /// How often memory is read while the monitor runs.
    public let interval: Duration
    /// The share of memory (of the total, or of the cgroup limit) below which
    /// available memory is pressure.
    public let availableFraction: Double
    private let reader: @Sendable () -> MemoryReading
    private let state = Mutex(State())
    private let queue = DispatchQueue(label: "strata.memory-pressure", qos: .utility)

    /// A monitor delivering to `source`, reading memory through `reader`
    /// every `interval` from ``start()`` on.
    public init(
        source: MemoryPressure = .shared,
        interval: Duration = .seconds(1),
        availableFraction: Double = 0.05,
        reader: @escaping @Sendable () -> MemoryReading = MemoryReading.system
    ) {
        self.source = source
        self.interval = interval
        self.availableFraction = availableFraction
        self.reader = reader
    }

    /// Takes one reading; returns `true` (after delivering the warning) when it
    /// found pressure.
    @discardableResult
    public func poll() async -> Bool {
        let reading = reader()
        if shouldWarn(reading) {
            await source.simulateWarning()
            return true
        }
        return false
    }

    func shouldWarn(_ reading: MemoryReading) -> Bool {
        var free: Double?
        // Readings may come from an injected reader: a negative current is
        // ignored, and the difference is taken in Double so it cannot trap.
        if let limit = reading.cgroupLimit, let current = reading.cgroupCurrent, limit > 0, current >= 0 {
            free = (Double(limit) - Double(current)) / Double(limit)
        } else if let total = reading.total, let available = reading.available, total > 0 {
            free = Double(available) / Double(total)
        }
        return state.withLock { state in
            var warn = false
            if let free {
                if !state.underPressure && free < availableFraction {
                    state.underPressure = true
                    warn = true
                } else if state.underPressure && free > availableFraction * 2 {
                    state.underPressure = false
                }
            }
            let watched = ["high", "max", "oom"]
            if let last = state.lastEvents,
               watched.contains(where: { name in
                   // A counter seen for the first time sets the baseline.
                   guard let before = last[name], let now = reading.cgroupEvents[name] else { return false }
                   return now > before
               }) {
                warn = true
            }
            state.lastEvents = reading.cgroupEvents
            return warn
        }
    }

    /// Starts polling every `interval`.
    public func start() {
        let nanos = Int(clamping: interval.nanoseconds)
        let queue = self.queue
        state.withLock { state in
            state.timer?.cancel()
            // Created inside the lock so the timer never escapes this region
            // before it is stored.
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.schedule(deadline: .now(), repeating: .nanoseconds(nanos), leeway: .nanoseconds(nanos / 10))
            timer.setEventHandler { [weak self] in
                guard let self else { return }
                if self.shouldWarn(self.reader()) {
                    let source = self.source
                    Task { await source.simulateWarning() }
                }
            }
            timer.resume()
            state.timer = timer
        }
    }

    /// Stops polling.
    public func stop() {
        state.withLock { state in
            state.timer?.cancel()
            state.timer = nil
        }
    }

    deinit { stop() }
}
