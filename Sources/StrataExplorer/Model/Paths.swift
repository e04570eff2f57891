import Foundation

/// Where the explorer looks for configuration and themes.
public struct ExplorerPaths: Equatable, Sendable {
    /// `$STRATA_CONFIG_DIR`, else `$XDG_CONFIG_HOME/strata`, else `~/.config/strata`.
    public var configDirectory: String
    /// `<config>/themes`: user themes, found by name before the built-ins.
    public var themesDirectory: String
    /// `<config>/pipeline.yaml`: opened when no `--config` is given and it exists.
    public var defaultPipeline: String
    /// `$XDG_STATE_HOME/strata/history`, else `~/.local/state/strata/history`:
    /// the `:` line's history across runs.
    public var historyFile: String

    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        let home = environment["HOME"] ?? NSHomeDirectory()
        if let explicit = environment["STRATA_CONFIG_DIR"], !explicit.isEmpty {
            configDirectory = explicit
        } else if let xdg = environment["XDG_CONFIG_HOME"], !xdg.isEmpty {
            configDirectory = xdg + "/strata"
        } else {
            configDirectory = home + "/.config/strata"
        }
        themesDirectory = configDirectory + "/themes"
        defaultPipeline = configDirectory + "/pipeline.yaml"
        if let state = environment["XDG_STATE_HOME"], !state.isEmpty {
            historyFile = state + "/strata/history"
        } else {
            historyFile = home + "/.local/state/strata/history"
        }
    }

    public var description: String {
        """
        config directory:  \(configDirectory)
        pipeline file:     \(defaultPipeline)\(FileManager.default.fileExists(atPath: defaultPipeline) ? "" : " (absent: the demo pipeline opens)")
        user themes:       \(themesDirectory)
        command history:   \(historyFile)
        built-in themes:   \(Theme.builtinNames.joined(separator: ", "))
        """
    }
}
