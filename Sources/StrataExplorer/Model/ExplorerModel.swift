import DequeModule
import Foundation
import Strata
import Synchronization

/// The result of a command, for the status line or a script's output.
public struct CommandOutcome: Equatable, Sendable {
    public var message: String
    public var isError: Bool

    public init(_ message: String, isError: Bool = false) {
        self.message = message
        self.isError = isError
    }
}

/// The explorer's live state: a pipeline, its counters over time, the event
/// log, the workload. Commands run on the caller's task; the cache never
/// waits for the screen, and the screen only reads snapshots.
public final class ExplorerModel: Sendable {
    struct History {
        var windowStart: ContinuousClock.Instant
        var windowStats: StatisticsSnapshot
        var getsPerSecond = 0.0
        var hitsPerSecond = 0.0
        var sparkline: [Double?] = []
        /// Gets per second over the last minute, oldest first.
        var getsHistory: [Double] = []
        /// p99 get latency (ns) of each second over the last minute (`nil`: no timed get).
        var p99History: [UInt64?] = []
        var windowLatency: LatencySnapshot
    }

    struct State {
        var events: Deque<EventLine> = []
        var status = CommandOutcome("")
        var paused = false
        var frozen: [PaneState]?
        var history: [History]
        var workload: Workload?
        /// A trace replayed as the workload, and the recording under way (ExplorerModel+Trace).
        var replay: TraceReplay?
        var lastReplay: TraceReplay?
        var recorder: TraceRecorder?
    }

    public static let eventLimit = 500
    public static let sparklineLength = 60

    public let pipeline: Pipeline
    let state: Mutex<State>
    /// One workload get in this many is logged with its path (0: none):
    /// `sample N`; ``autoSampling`` (the default): about two a second,
    /// whatever the rate, so the log stays readable.
    private let sampling = Atomic<Int>(ExplorerModel.autoSampling)
    public static let autoSampling = -1
    public var sampleEvery: Int { sampling.load(ordering: .relaxed) }

    /// How long each get took through the whole pipeline (typed, workload
    /// or replayed; back-fills not waited for): the comparison's p99.
    public let getLatency = LatencyHistogram()
    /// Compare mode: the side (`A`, `B`) each event line starts with, and the
    /// model whose log this one's events go to (one log for both sides).
    private let logLabel: String?
    private let logsTo: ExplorerModel?

    /// `logLabel` and `logsTo`: compare mode (``ComparisonModel``).
    public init(pipeline: Pipeline, logLabel: String? = nil, logsTo: ExplorerModel? = nil) {
        self.pipeline = pipeline
        self.logLabel = logLabel
        self.logsTo = logsTo
        let now = ContinuousClock.now
        state = Mutex(State(history: pipeline.levels.map {
            History(windowStart: now, windowStats: $0.statistics.snapshot(), windowLatency: $0.statistics.getLatency.snapshot())
        }))
        listenForInvalidations()
    }

    /// The model's subscriptions to its levels' changes (for the event log), for as long as it lives.
    private let subscriptions = Mutex<[CacheSubscription]>([])

    /// Logs every change a shared level (Redis, a disk directory other
    /// processes write) hears of, as the levels above drop the key.
    private func listenForInvalidations() {
        for level in pipeline.levels {
            let name = level.spec.name
            let subscription = level.cache.subscribe { [weak self] change in
                // This explorer's own write, which a shared level reports to
                // the other compositions over it in this process: not news.
                if change.isLocalWrite { return }
                switch change.invalidation {
                case .key(let key): self?.log("invalidated \(key) (by another client, via \(name))")
                case .all: self?.log("\(name): levels above flushed (store flushed or cleared)")
                case .contactLost: self?.log("\(name): levels above flushed (contact lost)")
                }
            }
            subscriptions.withLock { $0.append(subscription) }
        }
    }

    // MARK: Snapshots

    /// Every level's pane as of now (or as of `pause`).
    public func panes() -> [PaneState] {
        let (frozen, history) = state.withLock { ($0.paused ? $0.frozen : nil, $0.history) }
        if let frozen { return frozen }
        return livePanes(history)
    }

    /// Every level's pane as of now, paused or not (for `strata run`'s final
    /// table: `pause` freezes the screen's figures, not the counting).
    public func currentPanes() -> [PaneState] {
        livePanes(state.withLock { $0.history })
    }

    private func livePanes(_ history: [History]) -> [PaneState] {
        zip(pipeline.levels, history).map { level, history in
            PaneState(
                name: level.spec.name, summary: level.spec.summary, condition: level.spec.condition,
                conditionOn: level.toggle?.isOn, stats: level.statistics.snapshot(),
                getsPerSecond: history.getsPerSecond, hitsPerSecond: history.hitsPerSecond,
                entries: level.entries(), countLimit: level.countLimit, bytes: level.bytes(),
                capacity: level.capacityBytes, sparkline: history.sparkline,
                getsHistory: history.getsHistory, p99History: history.p99History,
                latency: level.statistics.getLatency.snapshot(), lastError: level.statistics.lastError,
                // Keys 1–9 flip the first nine toggles; later ones have no key.
                toggleNumber: level.toggle.flatMap { toggle in pipeline.toggles.firstIndex { $0 === toggle } }
                    .flatMap { $0 < 9 ? $0 + 1 : nil },
                configuration: [level.spec.paneConfiguration, level.liveConfiguration?() ?? ""]
                    .filter { !$0.isEmpty }.joined(separator: " · ")
            )
        }
    }

    public var events: [EventLine] { state.withLock { Array($0.events) } }
    public var status: CommandOutcome { state.withLock { $0.status } }
    public var isPaused: Bool { state.withLock { $0.paused } }
    public var workloadDescription: String? { state.withLock { $0.workload?.description ?? $0.replay?.description } }
    /// What the fail-safe and refresh ahead did so far (`fail-safe 1h: 3
    /// stale · 1 timed out`, `refresh ahead 80%: 4 refreshes`), if the pipeline has either.
    public var resilienceSummary: String? {
        guard let options = pipeline.resilienceOptions, let statistics = pipeline.resilienceStatistics else { return nil }
        var parts: [String] = []
        if let maxStale = options.maxStale {
            var text = "fail-safe \(Units.format(maxStale)): \(statistics.staleAnswers) stale"
            let timeouts = statistics.hardTimeouts + statistics.softTimeouts
            if timeouts > 0 { text += " · \(timeouts) timed out" }
            parts.append(text)
        }
        if let fraction = options.refreshAhead {
            let started = statistics.refreshesStarted
            var text = String(format: "refresh ahead %g%%: ", fraction * 100) + "\(started) refresh\(started == 1 ? "" : "es")"
            if statistics.refreshesFailed > 0 { text += " · \(statistics.refreshesFailed) failed" }
            parts.append(text)
        }
        return parts.isEmpty ? nil : parts.joined(separator: " · ")
    }
    public var workload: Workload? { state.withLock { $0.workload } }

    /// Advances per-second rates and sparklines; call it from the refresh loop.
    public func tick(now: ContinuousClock.Instant = .now) {
        let current = pipeline.levels.map { $0.statistics.snapshot() }
        let latencies = pipeline.levels.map { $0.statistics.getLatency.snapshot() }
        let names = pipeline.levels.map(\.spec.name)
        let reasons = pipeline.levels.map { Self.evictionReason($0.spec.policy ?? $0.spec.kind.defaultPolicy) }
        let evictions = state.withLock { state -> [String] in
            var evictions: [String] = []
            for i in state.history.indices {
                let elapsed = now - state.history[i].windowStart
                guard elapsed >= .seconds(1) else { continue }
                let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
                let window = current[i].minus(state.history[i].windowStats)
                state.history[i].getsPerSecond = max(0, Double(window.gets) / seconds)
                state.history[i].hitsPerSecond = max(0, Double(window.hits) / seconds)
                state.history[i].sparkline.appendKeepingLast(Self.sparklineLength, window.requests > 0 ? window.hitRatio : nil)
                state.history[i].getsHistory.appendKeepingLast(Self.sparklineLength, state.history[i].getsPerSecond)
                state.history[i].p99History.appendKeepingLast(
                    Self.sparklineLength, latencies[i].minus(state.history[i].windowLatency).percentile(0.99))
                state.history[i].windowLatency = latencies[i]
                // Evictions as events, once a second: how many and why.
                let evicted = (current[i].levelCounters?["evictions"] ?? 0)
                    - (state.history[i].windowStats.levelCounters?["evictions"] ?? 0)
                if evicted > 0 {
                    evictions.append("\(names[i]) evicted \(evicted) \(evicted == 1 ? "entry" : "entries") (\(reasons[i]))")
                }
                state.history[i].windowStart = now
                state.history[i].windowStats = current[i]
            }
            return evictions
        }
        for line in evictions { log(line) }
        sweepExpired()
    }

    /// A sweep of expired entries is under way (one at a time).
    private let sweeping = Atomic<Bool>(false)

    /// Removes the entries past their TTL from the levels that have one, so
    /// that a pane never counts them as held, and logs how many went.
    private func sweepExpired() {
        let levels = pipeline.levels.filter { $0.removeExpired != nil }
        guard !levels.isEmpty, !sweeping.exchange(true, ordering: .acquiringAndReleasing) else { return }
        Task { [weak self] in
            for level in levels {
                let removed = await level.removeExpired?() ?? 0
                if removed > 0 { self?.log("\(level.spec.name): \(removed) \(removed == 1 ? "entry" : "entries") expired (TTL passed)") }
            }
            self?.sweeping.store(false, ordering: .releasing)
        }
    }

    /// Why a level under `policy` evicts, for the event log.
    static func evictionReason(_ policy: EvictionPolicy?) -> String {
        switch policy {
        case .adaptive: "least often requested, or declined on arrival; over its capacity or count limit"
        case .lru: "least recently used; over its capacity or count limit"
        case nil: "over its capacity or count limit"
        }
    }

    // MARK: Log

    public func log(_ text: String, isError: Bool = false) {
        let line = EventLine(time: Self.clockTime(), text: logLabel.map { "\($0) \(text)" } ?? text, isError: isError)
        (logsTo ?? self).append(line)
    }

    private func append(_ line: EventLine) {
        state.withLock { state in
            state.events.prepend(line)
            if state.events.count > Self.eventLimit { state.events.removeLast() }
        }
    }

    public func setStatus(_ outcome: CommandOutcome) { state.withLock { $0.status = outcome } }

    static func clockTime() -> String {
        var now = time(nil)
        var parts = tm()
        localtime_r(&now, &parts)
        return String(format: "%02d:%02d:%02d", parts.tm_hour, parts.tm_min, parts.tm_sec)
    }

    // MARK: Commands

    /// Runs a cache command and records its outcome in the status line and log.
    /// Screen-only commands (`theme`, `hz`, `help`, `quit`) are the caller's.
    @discardableResult
    public func execute(_ command: Command) async -> CommandOutcome {
        record(command)
        let outcome = await perform(command)
        setStatus(outcome)
        return outcome
    }

    private func perform(_ command: Command) async -> CommandOutcome {
        if pipeline.isReadOnly, let refusal = command.readOnlyRefusal { return CommandOutcome(refusal, isError: true) }
        switch command {
        case .get(let key): return await get(key)
        case .set(let key, let value): return await set(key, value)
        case .remove(let key):
            do {
                // Only the levels that count entries can say whether they held the key.
                let before = pipeline.levels.map { $0.entries() }
                try await pipeline.cache.remove(key)
                let counted = zip(pipeline.levels, before).filter { $0.1 != nil }
                let holders = counted.filter { level, count in (level.entries() ?? 0) < (count ?? 0) }.map(\.0.spec.name)
                if !holders.isEmpty {
                    log("rm \(key) → removed from " + holders.joined(separator: ", "))
                    return CommandOutcome("removed \(key) from " + holders.joined(separator: ", "))
                }
                let uncounted = pipeline.levels.filter { level in
                    if case .redis = level.spec.kind { return true }
                    return false
                }.map(\.spec.name)
                if !uncounted.isEmpty {
                    log("rm \(key) → sent to every level (not in " + counted.map(\.0.spec.name).joined(separator: ", ") + ")")
                    return CommandOutcome("rm \(key): not found in " + counted.map(\.0.spec.name).joined(separator: ", ")
                                          + "; removed from " + uncounted.joined(separator: ", ") + " if it was there")
                }
                log("rm \(key) → not found, nothing removed")
                return CommandOutcome("rm \(key): not found in any level (nothing removed)")
            } catch {
                return failure("rm \(key)", error)
            }
        case .clear(let name):
            if let name {
                guard let level = pipeline.level(named: name) else {
                    return CommandOutcome("no level named '\(name)' (levels: \(levelNames))", isError: true)
                }
                await level.cache.clear()
                log("clear \(name) → emptied")
                return CommandOutcome("cleared \(name)")
            }
            await pipeline.cache.clear()
            log("clear → every level emptied")
            return CommandOutcome("cleared every level")
        case .warn:
            let before = pipeline.levels.map { $0.entries() }
            await pipeline.cache.onMemoryWarning()
            let emptied = zip(pipeline.levels, before).compactMap { level, count -> String? in
                guard let count, let after = level.entries(), after < count else { return nil }
                return "\(level.spec.name) \(count)→\(after)"
            }
            log("memory warning → " + (emptied.isEmpty ? "nothing to release" : emptied.joined(separator: ", ")))
            return CommandOutcome("memory warning sent to every level")
        case .toggle(let name):
            guard let toggle = pipeline.toggle(named: name) else {
                let known = pipeline.toggles.map(\.name)
                return CommandOutcome("no toggle named '\(name)'" + (known.isEmpty ? " (this pipeline has none)" : " (toggles: \(known.joined(separator: ", ")))"), isError: true)
            }
            let on = toggle.flip()
            log("toggle \(name) → \(on ? "on" : "off")")
            return CommandOutcome("\(name) is \(on ? "on" : "off")")
        case .record, .recordStop, .replay, .loadTrace:
            return await performTrace(command)
        case .load(let pattern, let keys, let rate, let seconds):
            return startLoad(Workload(pattern: pattern, keys: keys, rate: rate, seconds: seconds))
        case .sample(let every):
            sampling.store(every, ordering: .relaxed)
            return CommandOutcome(every == 0 ? "workload gets are not logged"
                                  : every == Self.autoSampling ? "logging about two workload gets a second"
                                  : "logging one workload get in \(every)")
        case .loadStop:
            guard let workload = state.withLock({ state -> Workload? in
                defer { state.workload = nil }
                return state.workload
            }) else { return stopReplay(replacedBy: nil) ?? CommandOutcome("no workload is running", isError: true) }
            workload.stop()
            log("load stopped after \(workload.completed) gets")
            return CommandOutcome("workload stopped")
        case .pause:
            let panes = livePanes(state.withLock { $0.history })
            state.withLock { state in
                state.paused = true
                state.frozen = panes
            }
            return CommandOutcome("paused: figures frozen (resume or p to continue)")
        case .resume:
            state.withLock { state in
                state.paused = false
                state.frozen = nil
            }
            return CommandOutcome("resumed")
        case .reset:
            await resetCounters()
            return CommandOutcome("counters reset")
        case .setCapacity, .setTTL, .setPolicy, .reload, .save, .export:
            return performLiveEdit(command)
        case .theme, .hz, .help, .quit:
            return CommandOutcome("")
        }
    }

    /// Starts `workload` in place of the running workload or replay, on
    /// this model's pipeline and on those of `others` (compare mode): one
    /// key generator, each request sent to every pipeline, so all see the
    /// same keys (in the same order when the workload has one worker, below
    /// 100/s; with more, the gets in flight together may reach each pipeline
    /// in another order, as they may reach one pipeline run to run).
    func startLoad(_ workload: Workload, alongside others: [ExplorerModel] = []) -> CommandOutcome {
        let models = [self] + others
        var replaced: Workload?
        for model in models {
            model.stopReplay(replacedBy: "load")
            let previous = model.state.withLock { state -> Workload? in
                defer { state.workload = workload }
                return state.workload
            }
            previous?.stop()
            if let previous {
                replaced = replaced ?? previous
                model.log("load: replaced the running \(previous.description) after \(previous.completed) gets")
            }
        }
        workload.start(request: { n, key in
            guard !others.isEmpty else { return await self.workloadGet(n, key, rate: workload.rate) }
            // Compared: every pipeline at once (a slow one does not halve the
            // rate), the worker waiting for all before its next key; and a
            // request sent to one is sent to every one, even if `load stop`
            // comes between (its own task is not cancelled).
            await Task {
                await withTaskGroup(of: Void.self) { group in
                    for model in models { group.addTask { await model.workloadGet(n, key, rate: workload.rate) } }
                }
            }.value
        }, onFinish: {
            for model in models {
                let ended = model.state.withLock { state -> Bool in
                    guard state.workload === workload else { return false }
                    state.workload = nil
                    return true
                }
                if ended { model.log("load finished: \(workload.completed) gets") }
            }
        })
        let seconds = workload.seconds.map { String(format: " for %.0fs", $0) } ?? ""
        for model in models {
            model.log("load \(workload.pattern.rawValue) over \(workload.keys) keys at \(workload.rate)/s" + seconds)
        }
        return CommandOutcome(replaced.map { "workload replaced the running \($0.description) (load stop ends it)" }
                              ?? "workload started (load stop ends it)")
    }

    /// One workload get: recorded if a recording is under way, timed, and
    /// logged with its path when it is one of the sampled ones.
    private func workloadGet(_ n: Int, _ key: String, rate: Int) async {
        recordRequest(.get(key: key))
        let setting = sampling.load(ordering: .relaxed)
        let every = setting == Self.autoSampling ? max(1, rate / 2) : setting
        if every > 0, n % every == 0 {
            await sampledGet(key)
            return
        }
        let started = ContinuousClock.now
        _ = try? await pipeline.cache.getIfPresent(key)
        getLatency.record(ContinuousClock.now - started)
    }

    /// Zeroes the counters of this model and of `others` (compare mode) at
    /// one moment: under load, no get may straddle the reset (a get counted
    /// before it and answered after it reads as more hits than gets).
    func resetCounters(alongside others: [ExplorerModel] = []) async {
        let models = [self] + others
        let reset = {
            for model in models { model.zeroCounters() }
        }
        if let workload = state.withLock({ $0.workload }) {
            await workload.quiesce(reset)
        } else if let replay = state.withLock({ $0.replay }) {
            await replay.quiesce(reset)
        } else {
            reset()
        }
        for model in models { model.log("counters reset") }
    }

    private func zeroCounters() {
        for level in pipeline.levels { level.statistics.reset() }
        getLatency.reset()
        let now = ContinuousClock.now
        state.withLock { state in
            state.history = pipeline.levels.map {
                History(windowStart: now, windowStats: $0.statistics.snapshot(), windowLatency: $0.statistics.getLatency.snapshot())
            }
            if state.paused { state.frozen = nil; state.paused = false }
        }
    }

    var levelNames: String { pipeline.levels.map(\.spec.name).joined(separator: ", ") }

    private func failure(_ what: String, _ error: any Error) -> CommandOutcome {
        let text = "\(what) failed: \(error)"
        log(text, isError: true)
        return CommandOutcome(text, isError: true)
    }

    /// One workload get, traced and logged with its path (`load get k  L1 hit`).
    private func sampledGet(_ key: String) async {
        let trace = RequestTrace()
        do {
            let started = ContinuousClock.now
            let value = try await trace.record { try await pipeline.cache.getIfPresent(key) }
            getLatency.record(ContinuousClock.now - started)
            let forward = trace.events.filter { !$0.isBackfill }
            if value != nil {
                let above = forward.filter { $0.outcome != .hit && $0.outcome != .refreshStarted }.count
                await trace.waitForEvents(count: forward.count + above, timeout: .milliseconds(200))
            }
            log("load get \(key)  " + Self.path(trace.events, levels: skippable()) + (value == nil ? " → not found" : ""),
                isError: forward.contains { $0.outcome == .error })
        } catch {
            log("load get \(key)  " + Self.path(trace.events, levels: skippable()) + " → failed", isError: true)
        }
    }

    private func get(_ key: String) async -> CommandOutcome {
        let trace = RequestTrace()
        let started = ContinuousClock.now
        let value: Data?
        do {
            value = try await trace.record { try await pipeline.cache.getIfPresent(key) }
        } catch {
            log("get \(key)  " + Self.path(trace.events, levels: skippable()) + " → failed", isError: true)
            return CommandOutcome("get \(key) failed: \(error)", isError: true)
        }
        let elapsed = ContinuousClock.now - started
        getLatency.record(elapsed)
        // Back-fills finish after the get: wait (briefly) for each level above
        // the hit, or until no back-fill is in flight: one its composition
        // dropped (a change reported since the read began, or a level below
        // that cannot be watched) sends no event, and the get waited 2 s.
        let forward = trace.events.filter { !$0.isBackfill }
        if value != nil {
            let above = forward.filter { $0.outcome != .hit && $0.outcome != .refreshStarted }.count
            let cache = pipeline.cache
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await trace.waitForEvents(count: forward.count + above, timeout: .seconds(2)) }
                group.addTask { await cache.waitForPendingWrites() }
                await group.next()
                group.cancelAll()
            }
        }
        let line = "get \(key)  " + Self.path(trace.events, levels: skippable()) + (value == nil ? " → not found" : "")
        log(line, isError: forward.contains { $0.outcome == .error })
        guard let value else { return CommandOutcome("get \(key): not found in any level") }
        let source = forward.last { $0.outcome == .hit }?.level ?? "?"
        return CommandOutcome("get \(key): \(value.count) bytes from \(source) in \(Units.latency(UInt64(max(0, elapsed.nanoseconds)))): \(Self.preview(value))")
    }

    private func set(_ key: String, _ value: String) async -> CommandOutcome {
        let data = Data(value.utf8)
        do {
            try await pipeline.cache.set(data, forKey: key)
            // An adaptive level may decline a new key when it is full (the
            // set still succeeds): say which levels the set reached that do
            // not hold the key now (asked directly, not inferred from a counter).
            let declinedBy = pipeline.levels
                .filter { level in level.toggle.map(\.isOn) ?? true }
                .filter { level in level.holds.map { !$0(key) } ?? false }
                .map(\.spec.name)
            let declined = declinedBy.isEmpty ? "" : " (declined by \(declinedBy.joined(separator: ", ")))"
            log("set \(key) (\(data.count) bytes) → written to every level\(declined)")
            return CommandOutcome("set \(key): \(data.count) bytes written\(declined)")
        } catch {
            return failure("set \(key)", error)
        }
    }

    /// `L1 miss → L2 miss → origin hit 48 ms → back-filled L2, L1`
    /// Every level in order, with whether its condition is off now (for the path).
    func skippable() -> [(name: String, conditionOff: Bool)] {
        pipeline.levels.map { ($0.spec.name, $0.toggle.map { !$0.isOn } ?? false) }
    }

    /// A request's path: each level's outcome in order. A level of `levels`
    /// the request passed without asking (above the last level it reached) is
    /// shown as skipped, `by condition` when its condition is off.
    static func path(_ events: [CacheEvent], levels: [(name: String, conditionOff: Bool)] = []) -> String {
        var parts: [String] = []
        let asked = Set(events.filter { !$0.isBackfill }.map(\.level))
        let deepest = levels.lastIndex { asked.contains($0.name) } ?? -1
        var skipped: [String: String] = [:]
        for (index, level) in levels.enumerated() where index < deepest && !asked.contains(level.name) {
            skipped[level.name] = "\(level.name) skipped" + (level.conditionOff ? " by condition" : "")
        }
        var pending = levels.prefix(max(0, deepest)).map(\.name).filter { skipped[$0] != nil }
        var missed: Set<String> = []
        for event in events where !event.isBackfill {
            // A loading get looks in the top level again before it loads
            // (another get's load may have landed): one miss is shown.
            if event.outcome == .miss, !missed.insert(event.level).inserted { continue }
            // The skipped levels above this one come first.
            if let position = levels.firstIndex(where: { $0.name == event.level }) {
                let above = Set(levels.prefix(position).map(\.name))
                for name in pending where above.contains(name) { parts.append(skipped[name] ?? name) }
                pending.removeAll { above.contains($0) }
            }
            if event.outcome == .stale {
                parts.append("answered stale (seen \(Units.latency(UInt64(max(0, event.duration.nanoseconds)))) ago)")
                continue
            }
            if event.outcome == .refreshStarted {
                parts.append("refresh ahead started")
                continue
            }
            if event.outcome == .timedOut {
                parts.append("timed out after \(Units.latency(UInt64(max(0, event.duration.nanoseconds))))")
                continue
            }
            var text = "\(event.level) \(event.outcome.rawValue)"
            // A plain miss: the level holds nothing for the key.
            if event.outcome == .miss && event.missReason == .expired { text += " (expired)" }
            if event.outcome == .hit || event.duration >= .milliseconds(1) {
                text += " " + Units.latency(UInt64(max(0, event.duration.nanoseconds)))
            }
            // The whole error: the screen clips it to its width, with an ellipsis.
            if event.outcome == .error, let error = event.error { text += " (\(error))" }
            parts.append(text)
        }
        let filled = events.filter { $0.isBackfill && $0.outcome == .stored }.map(\.level)
        let failed = events.filter { $0.isBackfill && $0.outcome == .error }.map(\.level)
        let declined = events.filter { $0.isBackfill && $0.outcome == .declined }.map(\.level)
        if !filled.isEmpty { parts.append("back-filled " + filled.joined(separator: ", ")) }
        if !declined.isEmpty { parts.append("back-fill declined by " + declined.joined(separator: ", ") + " (it holds a newer value)") }
        if !failed.isEmpty { parts.append("back-fill failed " + failed.joined(separator: ", ")) }
        return parts.isEmpty ? "(every level skipped)" : parts.joined(separator: " → ")
    }

    /// The first bytes of a value as printable text.
    static func preview(_ data: Data) -> String {
        let text = String(decoding: data.prefix(48), as: UTF8.self)
        let clean = String(text.unicodeScalars.map { $0.properties.generalCategory == .control ? "." : Character($0) })
        return "\"" + clean + (data.count > 48 ? "…" : "") + "\""
    }

    /// Stops the workload and waits for its gets and their back-fills, then
    /// shuts the pipeline down (``Pipeline/shutdown()``: its disk levels
    /// retired, then its temporary directories deleted). Every way out of
    /// the explorer calls it.
    public func shutdown() async {
        let workload = state.withLock { $0.workload }
        workload?.stop()
        await workload?.finished()
        await endTracing()
        await pipeline.cache.waitForPendingWrites()
        await pipeline.shutdown()
    }
}

extension Array {
    /// Appends `element`, then drops the oldest elements beyond `limit`.
    mutating func appendKeepingLast(_ limit: Int, _ element: Element) {
        append(element)
        if count > limit { removeFirst(count - limit) }
    }
}
