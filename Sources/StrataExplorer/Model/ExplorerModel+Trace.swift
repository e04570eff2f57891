import Foundation
import StrataSim

/// Recording and replaying traces: `record FILE`, `record stop`,
/// `replay FILE [SPEED]` and `load trace FILE [RATE]` (docs/traces.md).
extension ExplorerModel {
    /// The recording for the title bar: `REC t.trace 120`, or nil when none is under way.
    public var recordingDescription: String? {
        state.withLock { $0.recorder }.map { "REC \(TraceReader.displayName($0.path)) \($0.requests)" }
    }

    /// The running replay, if any.
    public var replay: TraceReplay? { state.withLock { $0.replay } }

    /// The replay started last, running or ended.
    public var lastReplay: TraceReplay? { state.withLock { $0.lastReplay } }

    /// Waits until the replay started last (if any) has sent its last request
    /// and the back-fills it started are written.
    public func replayFinished() async {
        await lastReplay?.finished()
        await pipeline.cache.waitForPendingWrites()
    }

    /// Records a command the user typed, if it is a request and a recording is under way.
    func record(_ command: Command) {
        switch command {
        case .get(let key): recordRequest(.get(key: key))
        case .set(let key, let value): recordRequest(.set(key: key, valueSize: value.utf8.count))
        case .remove(let key): recordRequest(.remove(key: key))
        case .clear(let level): recordRequest(.clear(level: level))
        default: return
        }
    }

    /// Records one request, if a recording is under way (it only appends to a buffer).
    func recordRequest(_ operation: RecordedRequest.Operation) {
        state.withLock { $0.recorder }?.record(operation)
    }

    func performTrace(_ command: Command) async -> CommandOutcome {
        switch command {
        case .record(let path): return await startRecording(path)
        case .recordStop:
            guard let outcome = await stopRecording() else { return CommandOutcome("not recording", isError: true) }
            return outcome
        case .replay(let path, let speed):
            do {
                let requests = try RecordedTrace.read(path: path)
                return startReplay(TraceReplay(label: "replay \(TraceReader.displayName(path))", requests: requests, speed: speed))
            } catch {
                return CommandOutcome("\(error)", isError: true)
            }
        case .loadTrace(let path, let rate):
            do {
                let requests = try KeyListTrace.read(path: path, rate: rate)
                return startReplay(TraceReplay(label: "load trace \(TraceReader.displayName(path))", requests: requests,
                                               speed: rate == nil ? nil : 1))
            } catch {
                return CommandOutcome("\(error)", isError: true)
            }
        default:
            return CommandOutcome("")
        }
    }

    private func startRecording(_ path: String) async -> CommandOutcome {
        // The last one ends first: its last buffer may go to the same file.
        let previous = await stopRecording()
        let recorder: TraceRecorder
        do {
            recorder = try TraceRecorder(path: path) { [weak self] message in
                guard let self else { return }
                self.state.withLock { state in
                    if state.recorder?.path == path { state.recorder = nil }
                }
                self.log(message, isError: true)
                self.setStatus(CommandOutcome(message, isError: true))
            }
        } catch {
            return CommandOutcome((previous.map { $0.message + "; " } ?? "") + error.description, isError: true)
        }
        state.withLock { $0.recorder = recorder }
        log("recording every request to \(path)")
        return CommandOutcome((previous.map { $0.message + "; " } ?? "") + "recording to \(path) (record stop ends it)")
    }

    /// Ends the recording under way, its buffer written; nil when there is none.
    private func stopRecording() async -> CommandOutcome? {
        guard let recorder = state.withLock({ state -> TraceRecorder? in
            defer { state.recorder = nil }
            return state.recorder
        }) else { return nil }
        let (requests, failure) = await recorder.stop()
        if let failure {
            return CommandOutcome("recording to \(recorder.path) had ended after \(requests) requests: \(failure)", isError: true)
        }
        let text = "recorded \(requests) request\(requests == 1 ? "" : "s") to \(recorder.path)"
        log(text)
        return CommandOutcome(text)
    }

    /// Starts `replay` in place of the running workload or replay.
    private func startReplay(_ replay: TraceReplay) -> CommandOutcome {
        let (workload, previous) = state.withLock { state -> (Workload?, TraceReplay?) in
            defer { state.workload = nil; state.replay = replay; state.lastReplay = replay }
            return (state.workload, state.replay)
        }
        workload?.stop()
        previous?.stop()
        let replaced = workload.map { "the running \($0.description)" } ?? previous.map { "the running \($0.label)" }
        if let replaced { log("\(replay.label): replaced \(replaced)") }
        replay.start(perform: { [weak self] operation in
            guard let self else { return false }
            self.recordRequest(operation)
            return await self.replayRequest(operation, replay: replay)
        }, onFinish: { [weak self] in
            guard let self else { return }
            let ended = self.state.withLock { state -> Bool in
                guard state.replay === replay else { return false }
                state.replay = nil
                return true
            }
            let failed = replay.failed > 0 ? " (\(replay.failed) failed)" : ""
            if ended {
                self.log("\(replay.label) finished: \(replay.completed) requests in "
                         + String(format: "%.1fs", replay.elapsedSeconds) + failed, isError: replay.failed > 0)
            }
        })
        let pace = replay.speed.map { String(format: "×%g", $0) } ?? "as fast as possible"
        log("\(replay.label): \(replay.requests.count) requests, \(pace)")
        return CommandOutcome("\(replay.label) started: \(replay.requests.count) requests, \(pace)"
                              + (replaced.map { ", replacing \($0)" } ?? "") + " (load stop ends it)")
    }

    /// Stops the running replay (`load stop`, or a new `load`); nil when none runs.
    @discardableResult
    func stopReplay(replacedBy command: String?) -> CommandOutcome? {
        guard let replay = state.withLock({ state -> TraceReplay? in
            defer { state.replay = nil }
            return state.replay
        }) else { return nil }
        replay.stop()
        let text = "\(replay.label) stopped after \(replay.completed) of \(replay.requests.count) requests"
        log(command.map { "\($0): \(text)" } ?? text)
        return CommandOutcome(text)
    }

    /// One replayed request; false when it failed (the first failure is logged).
    private func replayRequest(_ operation: RecordedRequest.Operation, replay: TraceReplay) async -> Bool {
        func failed(_ what: String) -> Bool {
            if replay.failed == 0 { log("\(replay.label): \(what) (later failures are counted in the title)", isError: true) }
            return false
        }
        do {
            switch operation {
            case .get(let key):
                // Done once its back-fills are: the next request sees them,
                // so a replay repeats its counters at any speed.
                let started = ContinuousClock.now
                _ = try await pipeline.cache.getIfPresent(key)
                let elapsed = ContinuousClock.now - started
                replay.getLatency.record(elapsed)
                getLatency.record(elapsed)
                await pipeline.cache.waitForPendingWrites()
            case .set(let key, let size): try await pipeline.cache.set(Data(repeating: UInt8(ascii: "."), count: size), forKey: key)
            case .remove(let key): try await pipeline.cache.remove(key)
            case .clear(let name?):
                guard let level = pipeline.level(named: name) else {
                    return failed("clear \(name): no level named '\(name)' (levels: \(levelNames))")
                }
                await level.cache.clear()
            case .clear(nil): await pipeline.cache.clear()
            }
            return true
        } catch {
            return failed("\(operation) failed: \(error)")
        }
    }

    /// For shutdown: stops the replay and writes out the recording.
    func endTracing() async {
        let replay = state.withLock { $0.replay }
        replay?.stop()
        await replay?.finished()
        _ = await stopRecording()
    }
}
