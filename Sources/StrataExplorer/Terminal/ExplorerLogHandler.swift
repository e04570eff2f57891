import Logging

/// The swift-log handler of the `strata` executable (bootstrapped once at
/// start): every line goes through ``LogRouter``, so nothing writes to the
/// terminal while the screen is up.
public struct ExplorerLogHandler: LogHandler {
    public let label: String
    public var logLevel: Logger.Level = .info
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    let router: LogRouter

    public init(label: String, router: LogRouter = .shared) {
        self.label = label
        self.router = router
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { $1 } }
        if let own = event.metadata { merged.merge(own) { $1 } }
        var text = event.message.description
        if !merged.isEmpty {
            text += " " + merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        }
        router.emit(level: event.level, label: label, message: text)
    }
}
