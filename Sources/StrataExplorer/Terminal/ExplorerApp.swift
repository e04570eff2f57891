import Dispatch
import Foundation

/// The interactive explorer: one main-queue `DispatchSourceTimer` reads keys,
/// advances the model's rates and repaints; a stdin read source wakes it early
/// for typing. Every ncurses call stays on the main queue; commands run on
/// their own tasks, so the cache never waits for the screen.
@MainActor
public final class ExplorerApp {
    let model: ExplorerModel
    /// Compare mode: both sides (`model` is side A); every command goes to both.
    let comparison: ComparisonModel?
    let backend: NcursesBackend
    let renderer: Renderer
    var input = InputController()
    var theme: Theme
    var hz: Int
    let themeDirectories: [String]
    var timer: (any DispatchSourceTimer)?
    var stdinSource: (any DispatchSourceRead)?
    var signalSources: [any DispatchSourceSignal] = []
    var forceRedraw = false
    var lastFrame: (state: ViewState, width: Int, height: Int)?
    /// Frames actually painted (unchanged frames are skipped).
    public private(set) var framesPainted = 0
    var onExit: (@MainActor (Int32) -> Void)?
    /// Where the `:` history is kept across runs (nil: not kept).
    let historyFile: HistoryFile?
    /// The key inspector's listings and previews (compare mode: side A's).
    let inspectorFeed: InspectorFeed
    /// Compare mode: side B's.
    let inspectorFeedB: InspectorFeed?

    /// `comparison`: compare mode (`strata --compare`); its side A is `model`,
    /// and focus and the inspector reach both sides' levels.
    public init(model: ExplorerModel, theme: Theme, themeDirectories: [String], hz: Int,
                noColor: Bool, forceASCII: Bool, historyFile: HistoryFile? = nil, mouse: Bool = true,
                comparison: ComparisonModel? = nil) throws {
        self.model = comparison?.a ?? model
        self.comparison = comparison
        self.inspectorFeed = InspectorFeed(pipeline: self.model.pipeline, side: comparison == nil ? nil : .a)
        self.inspectorFeedB = comparison.map { InspectorFeed(pipeline: $0.b.pipeline, side: .b) }
        self.historyFile = historyFile
        input = InputController(history: historyFile?.load() ?? [])
        let levels = { (model: ExplorerModel) in model.pipeline.levels.map(\.spec.name) }
        let toggles = { (model: ExplorerModel) in model.pipeline.toggles.map(\.name) }
        input.completion = Completion(levels: comparison.map { Completion.sided(levels($0.a), levels($0.b)) } ?? levels(self.model),
                                      toggles: comparison.map { Completion.sided(toggles($0.a), toggles($0.b)) } ?? toggles(self.model),
                                      themes: Array(Set(Theme.builtinNames + themeDirectories.flatMap(Theme.userThemeNames))).sorted())
        input.sides = comparison.map { CompareSides(a: levels($0.a), b: levels($0.b)) }
        self.backend = try NcursesBackend(noColor: noColor, forceASCII: forceASCII, mouse: mouse)
        self.renderer = Renderer(unicode: backend.unicode)
        self.theme = theme
        self.themeDirectories = themeDirectories
        self.hz = hz
        backend.apply(theme)
        // The screen is up: from here on only the renderer writes to the terminal.
        LogRouter.shared.route(to: model)
    }

    /// Starts the loop; `onExit` runs (on the main queue) after the terminal is restored.
    public func start(onExit: @escaping @MainActor (Int32) -> Void) {
        self.onExit = onExit
        model.setStatus(CommandOutcome(comparison == nil ? "\(model.pipeline.levels.count) levels ready; : for commands, ? for help"
                                       : "comparing A and B: every command goes to both; : for commands, ? for help"))
        let source = DispatchSource.makeReadSource(fileDescriptor: 0, queue: .main)
        source.setEventHandler { MainActor.assumeIsolated { self.frame(tick: false) } }
        source.resume()
        stdinSource = source
        signalSources = SignalSources.make([SIGTERM, SIGHUP], queue: .main) { [weak self] sig in
            MainActor.assumeIsolated { self?.stop(status: 128 + sig) }
        }
        scheduleTimer()
        frame(tick: true)
    }

    func scheduleTimer() {
        timer?.cancel()
        let timer = DispatchSource.makeTimerSource(queue: .main)
        let interval = 1_000_000 / hz
        timer.schedule(deadline: .now(), repeating: .microseconds(interval), leeway: .microseconds(interval / 10))
        timer.setEventHandler { MainActor.assumeIsolated { self.frame(tick: true) } }
        timer.resume()
        self.timer = timer
    }

    /// Keys handled per frame at most: a long paste is taken in batches, with
    /// a paint and the signal sources (SIGTERM) served between them.
    static let keysPerFrame = 8192
    var continuationScheduled = false

    /// One frame: drain keys (a resize arrives as a key), advance rates, paint.
    func frame(tick: Bool) {
        var handled = 0
        while handled < Self.keysPerFrame, let key = backend.readKey() {
            handled += 1
            if case .mouse(let event) = key {
                for action in Self.handle(event, regions: lastRegions, input: &input) { perform(action) }
                continue
            }
            if key == .control("z") {  // suspend, as a shell's job control expects
                backend.suspend()
                forceRedraw = true
                continue
            }
            for action in input.handle(key) { perform(action) }
            if timer == nil { return }  // quit
        }
        if tick {
            if let comparison { comparison.tick() } else { model.tick() }
        }
        paint()
        if handled == Self.keysPerFrame && !continuationScheduled {
            continuationScheduled = true
            DispatchQueue.main.async {
                MainActor.assumeIsolated {
                    self.continuationScheduled = false
                    if self.timer != nil { self.frame(tick: false) }
                }
            }
        }
    }

    func paint() {
        let size = backend.size
        input.clampHelpScroll(to: Renderer.helpMaxScroll(height: size.height))
        let state = Self.viewState(model: model, input: &input, hz: hz, theme: theme.name, height: size.height, feed: inspectorFeed,
                                   feedB: inspectorFeedB, comparison: comparison)
        // Keys move the focus over the sides as this frame lays them out.
        if comparison != nil { input.sides?.sideBySide = Renderer.comparesSideBySide(state, width: size.width, height: size.height) }
        // The screen is a function of the state: an unchanged state (an idle
        // pipeline between its once-a-second rate updates) is not redrawn.
        if !forceRedraw, let last = lastFrame, last.state == state, last.width == size.width, last.height == size.height {
            return
        }
        let frame = renderer.render(state, width: size.width, height: size.height)
        lastRegions = frame.regions
        backend.paint(frame, forceFullRedraw: forceRedraw)
        lastFrame = (state, size.width, size.height)
        framesPainted += 1
        forceRedraw = false
    }

    /// Where the panes were in the last frame painted (for mouse presses).
    var lastRegions: [CellBuffer.Region] = []

    /// A press focuses the pane under the pointer (either side's, in compare
    /// mode); the wheel scrolls the log. Returns what the app shows for it.
    @discardableResult
    static func handle(_ event: MouseEvent, regions: [CellBuffer.Region], input: inout InputController) -> [InputAction] {
        switch event.kind {
        case .press:
            if let target = CellBuffer.focus(x: event.x, y: event.y, in: regions) { return input.click(target) }
        case .wheelUp: input.scrollEvents(by: -MouseEvent.wheelStep)
        case .wheelDown: input.scrollEvents(by: MouseEvent.wheelStep)
        }
        return []
    }

    /// What the screen shows, from the model and the input state (the event
    /// filter applied, the selection kept within the events shown).
    /// (`feedB`: compare mode's side B's inspector feed.)
    static func viewState(model: ExplorerModel, input: inout InputController, hz: Int, theme: String, height: Int,
                          feed: InspectorFeed? = nil, feedB: InspectorFeed? = nil, comparison: ComparisonModel? = nil) -> ViewState {
        let all = model.events
        let events = EventFilter.apply(input.eventFilter, to: all)
        input.clampEventSelection(to: events.count)
        let inspector = (input.inspector?.side == .b ? feedB : feed).flatMap { inspectorView(feed: $0, input: &input) }
        let panes = model.panes()
        return ViewState(
            title: (comparison?.title ?? model.pipeline.spec.name) + (model.pipeline.isReadOnly ? " (read-only)" : ""),
            panes: panes, events: events, status: model.status,
            commandLine: input.commandLine, commandCursor: input.commandCursor, showHelp: input.showHelp,
            helpScroll: input.helpScroll, paused: model.isPaused, hz: hz, workload: model.workloadDescription, theme: theme,
            focus: input.focus, zoomed: input.zoomed, compact: input.compact, eventSelection: input.eventSelection, eventFilter: input.eventFilter,
            eventTotal: all.count, filterLine: input.filterLine?.text ?? input.inspector?.filterLine?.text,
            filterCursor: (input.filterLine ?? input.inspector?.filterLine)?.charactersAfterCursor ?? 0,
            detail: input.showDetail && input.eventSelection < events.count ? events[input.eventSelection] : nil,
            resilience: model.resilienceSummary, inspector: inspector, recording: model.recordingDescription,
            comparison: comparison?.view(panesA: panes)
        )
    }

    /// The inspector's frame: the level's last listing (from `feed`, the
    /// inspected side's), filtered and sorted as the input says, the
    /// selection kept within it.
    static func inspectorView(feed: InspectorFeed, input: inout InputController) -> InspectorView? {
        guard let inspecting = input.inspector, inspecting.level < feed.pipeline.levels.count else { return nil }
        let (listing, rows) = feed.rows(level: inspecting.level, filter: inspecting.filter, sort: inspecting.sort,
                                        descending: inspecting.descending)
        input.clampInspectorSelection(to: rows.count)
        return InspectorView(
            level: feed.levelName(inspecting.level), rows: rows, listed: listing?.keys.count ?? 0,
            hot: listing?.hot ?? [], hotSample: listing?.hotSample, sort: inspecting.sort, descending: inspecting.descending, filter: inspecting.filter,
            selection: input.inspector?.selection ?? 0, loading: listing == nil, error: listing?.error,
            preview: inspecting.preview ? feed.preview : nil)
    }

    func perform(_ action: InputAction) {
        switch action {
        case .run(let command): run(command)
        case .flipToggle(let index):
            let toggles = model.pipeline.toggles
            guard index < toggles.count else {
                model.setStatus(CommandOutcome("no toggle \(index + 1) (this pipeline has \(toggles.count))", isError: true))
                return
            }
            run(.toggle(name: toggles[index].name))
        case .cycleTheme:
            let names = Theme.builtinNames
            let next = names[((names.firstIndex(of: theme.name) ?? -1) + 1) % names.count]
            run(.theme(name: next))
        case .faster: setHz(min(60, hz + (hz >= 10 ? 5 : 1)))
        case .slower: setHz(max(1, hz - (hz > 10 ? 5 : 1)))
        case .redraw: forceRedraw = true
        case .error(let message): model.setStatus(CommandOutcome(message, isError: true))
        case .hint(let message): model.setStatus(CommandOutcome(message))
        case .inspect:
            inspectorFeed.close()
            inspectorFeedB?.close()
        case .previewSelectedKey:
            guard let inspecting = input.inspector, let feed = feed(inspecting.side) else { return }
            let rows = feed.rows(level: inspecting.level, filter: inspecting.filter, sort: inspecting.sort,
                                 descending: inspecting.descending).rows
            guard inspecting.selection < rows.count else {
                input.closeInspectorPreview()
                return
            }
            feed.requestPreview(key: rows[inspecting.selection].key, level: inspecting.level)
        case .closePreview:
            inspectorFeed.closePreview()
            inspectorFeedB?.closePreview()
        }
    }

    /// The inspector feed of `side` (B's only in compare mode).
    func feed(_ side: ComparisonModel.Side) -> InspectorFeed? { side == .a ? inspectorFeed : inspectorFeedB }

    func setHz(_ value: Int) {
        hz = value
        scheduleTimer()
        model.setStatus(CommandOutcome("refresh \(hz) Hz"))
    }

    func run(_ command: Command) {
        switch command {
        case .quit: stop(status: 0)
        case .help: input = InputController.withHelp(from: input)
        case .hz(let value): setHz(value)
        case .theme(let name):
            do {
                theme = try Theme.load(name, directories: themeDirectories)
                backend.apply(theme)
                model.setStatus(CommandOutcome("theme \(theme.name)"))
            } catch {
                model.setStatus(CommandOutcome("\(error)", isError: true))
            }
        case .pause where model.isPaused:
            run(.resume)
        default:
            if let comparison {
                Task.detached { await comparison.execute(command) }
                return
            }
            let model = self.model
            Task.detached { await model.execute(command) }
        }
    }

    /// Gives the terminal back, then shuts the model down (its disk levels
    /// retired before their temporary directories are deleted) and runs
    /// `onExit`. Only the first call does anything.
    func stop(status: Int32) {
        guard let onExit else { return }
        self.onExit = nil
        timer?.cancel()
        timer = nil
        stdinSource?.cancel()
        for source in signalSources { source.cancel() }
        backend.shutdown()
        LogRouter.shared.route(to: nil)
        historyFile?.save(input.history)
        let model = self.model, comparison = self.comparison
        Task {
            if let comparison { await comparison.shutdown() } else { await model.shutdown() }
            onExit(status)
        }
    }
}

extension InputController {
    /// The same input state with the help overlay open (for `:help`).
    static func withHelp(from state: InputController) -> InputController {
        var copy = state
        _ = copy.handle(.character("?"))
        return copy
    }
}
