/// A one-line progress bar for long runs, drawn only once a run has taken
/// more than `delay` (so quick runs print nothing) and redrawn at most ten
/// times a second. It writes through a closure (stderr in the CLI).
public final class ProgressBar {
    let total: Int
    let delay: Duration
    let write: (String) -> Void
    let clock = ContinuousClock()
    let start: ContinuousClock.Instant
    var lastDraw: ContinuousClock.Instant?
    var drawnWidth = 0

    /// A bar for `total` units of work; nothing is drawn before `delay` has passed.
    public init(total: Int, delay: Duration = .seconds(1), write: @escaping (String) -> Void) {
        self.total = max(total, 1)
        self.delay = delay
        self.write = write
        self.start = clock.now
    }

    /// Reports `done` units finished; `label` says what is running.
    public func update(done: Int, label: String) {
        let now = clock.now
        guard now - start >= delay else { return }
        if let lastDraw, now - lastDraw < .milliseconds(100) { return }
        lastDraw = now
        let fraction = min(max(Double(done) / Double(total), 0), 1)
        let width = 30
        let filled = Int(fraction * Double(width))
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
        let line = "[\(bar)] \(Int(fraction * 100))% \(label)"
        let padding = String(repeating: " ", count: max(0, drawnWidth - line.count))
        write("\r" + line + padding)
        drawnWidth = line.count
    }

    /// Erases the bar, if one was drawn.
    public func finish() {
        guard drawnWidth > 0 else { return }
        write("\r" + String(repeating: " ", count: drawnWidth) + "\r")
        drawnWidth = 0
    }
}
