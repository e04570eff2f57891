import Foundation

/// An RGB colour, or the terminal's own default (transparent) colour.
public enum ThemeColor: Equatable, Sendable {
    case terminalDefault
    case rgb(UInt8, UInt8, UInt8)

    /// The nearest xterm-256 index (btop's mapping: the grey ramp when the
    /// channels are close, else the 6x6x6 cube).
    public var xterm256: Int16? {
        guard case .rgb(let r, let g, let b) = self else { return nil }
        let (ri, gi, bi) = (Int(r), Int(g), Int(b))
        if ri / 11 == gi / 11 && gi / 11 == bi / 11 {
            let grey = (ri + gi + bi) / 3
            if grey < 8 { return 16 }
            if grey > 238 { return 231 }
            return Int16(232 + min(23, (grey - 8) / 10))
        }
        func level(_ v: Int) -> Int { Int((Double(v) / 51).rounded()) }
        return Int16(16 + 36 * level(ri) + 6 * level(gi) + level(bi))
    }

    /// The colour as a direct-colour number (`0xRRGGBB`) for a terminal with
    /// 24-bit colour. Direct-colour descriptions read 0…7 as the 8 basic
    /// colours, so those (near-black blues) are nudged to 8.
    public var direct: Int32? {
        guard case .rgb(let r, let g, let b) = self else { return nil }
        return max(8, Int32(r) << 16 | Int32(g) << 8 | Int32(b))
    }

    /// The nearest of the 8 basic colours (0 black … 7 white): each channel
    /// above half counts as on.
    public var basic8: Int16? {
        guard case .rgb(let r, let g, let b) = self else { return nil }
        return Int16((r >= 128 ? 1 : 0) | (g >= 128 ? 2 : 0) | (b >= 128 ? 4 : 0))
    }
}

/// Text attributes a theme may ask for (and all a monochrome terminal has).
public struct ThemeAttributes: OptionSet, Equatable, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let bold = ThemeAttributes(rawValue: 1)
    public static let dim = ThemeAttributes(rawValue: 2)
    public static let reverse = ThemeAttributes(rawValue: 4)
    public static let underline = ThemeAttributes(rawValue: 8)
}

public struct ThemeStyle: Equatable, Sendable {
    public var foreground: ThemeColor
    public var background: ThemeColor
    public var attributes: ThemeAttributes
}

/// A problem in a theme file.
public struct ThemeError: Error, Equatable, CustomStringConvertible {
    public let file: String
    public let line: Int?
    public let message: String
    public var description: String { "\(file)\(line.map { ":\($0)" } ?? ""): \(message)" }
}

/// Colours for every ``Role``, read from btop-style `theme[key]="value"` lines.
///
/// Keys: `main_fg main_bg title_fg title_bg border label dim value hit miss
/// error sparkline status_fg status_bg status_error footer_fg footer_bg
/// footer_key toggle_on toggle_off help_fg help_bg help_key command_fg
/// command_bg`, plus `<key>_attr` with any of `bold dim reverse underline`
/// (comma separated). Values: `#rrggbb`, `#gg` (grey), `R G B` (decimal) or
/// `""` (the terminal's default). Unknown keys are ignored (so btop themes
/// load); missing keys fall back to the built-in default theme.
public struct Theme: Equatable, Sendable {
    public let name: String
    public private(set) var colors: [String: ThemeColor]
    public private(set) var attributes: [String: ThemeAttributes]

    public static let keys = [
        "main_fg", "main_bg", "title_fg", "title_bg", "border", "label", "dim", "value", "hit", "miss", "error",
        "sparkline", "status_fg", "status_bg", "status_error", "footer_fg", "footer_bg", "footer_key",
        "toggle_on", "toggle_off", "help_fg", "help_bg", "help_key", "command_fg", "command_bg",
    ]

    /// The style for a role on a colour terminal.
    public func style(for role: Role) -> ThemeStyle {
        func color(_ key: String) -> ThemeColor { colors[key] ?? Theme.builtinDefault.colors[key] ?? .terminalDefault }
        func attrs(_ key: String) -> ThemeAttributes { attributes[key] ?? Theme.builtinDefault.attributes[key] ?? [] }
        let (fg, bg): (String, String) = switch role {
        case .normal: ("main_fg", "main_bg")
        case .title: ("title_fg", "title_bg")
        case .border: ("border", "main_bg")
        case .label: ("label", "main_bg")
        case .value: ("value", "main_bg")
        case .hit: ("hit", "main_bg")
        case .miss: ("miss", "main_bg")
        case .error: ("error", "main_bg")
        case .dim: ("dim", "main_bg")
        case .sparkline: ("sparkline", "main_bg")
        case .status: ("status_fg", "status_bg")
        case .statusError: ("status_error", "status_bg")
        case .footer: ("footer_fg", "footer_bg")
        case .footerKey: ("footer_key", "footer_bg")
        case .toggleOn: ("toggle_on", "main_bg")
        case .toggleOff: ("toggle_off", "main_bg")
        case .helpText: ("help_fg", "help_bg")
        case .helpKey: ("help_key", "help_bg")
        case .command: ("command_fg", "command_bg")
        case .cursor: ("command_bg", "command_fg")
        case .focus: ("label", "main_bg")
        }
        return ThemeStyle(foreground: color(fg), background: color(bg), attributes: attrs(fg))
    }

    /// Attributes alone, for terminals without colour or with `NO_COLOR`.
    public static func monochromeAttributes(for role: Role) -> ThemeAttributes {
        switch role {
        case .title, .status, .footer, .command: .reverse
        case .statusError: [.reverse, .bold]
        case .footerKey: [.reverse, .bold]
        case .label, .helpKey, .hit, .focus: .bold
        case .error, .toggleOff: [.bold, .underline]
        case .dim, .border: .dim
        default: []
        }
    }

    // MARK: Parsing

    public static func parse(_ text: String, name: String, file: String) throws -> Theme {
        var colors: [String: ThemeColor] = [:]
        var attributes: [String: ThemeAttributes] = [:]
        for (index, rawLine) in lines(of: text).enumerated() {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            guard line.hasPrefix("theme["), let close = line.firstIndex(of: "]"),
                  let equals = line[close...].firstIndex(of: "=") else {
                throw ThemeError(file: file, line: index + 1, message: "expected theme[key]=\"value\", got \"\(line.prefix(60))\"")
            }
            let key = String(line[line.index(line.startIndex, offsetBy: 6)..<close])
            var value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            // A comment after a quoted value: ` #` after the closing quote, not inside it.
            if value.first == "\"" {
                let afterOpening = value.index(after: value.startIndex)
                let closing = value[afterOpening...].firstIndex(of: "\"").map { value.index(after: $0) } ?? value.endIndex
                if let hash = value.range(of: " #", range: closing..<value.endIndex) {
                    value = value[..<hash.lowerBound].trimmingCharacters(in: .whitespaces)
                }
            }
            if value.count >= 2, value.first == "\"", value.last == "\"" { value = String(value.dropFirst().dropLast()) }
            if key.hasSuffix("_attr") {
                attributes[String(key.dropLast(5))] = try parseAttributes(value, file: file, line: index + 1)
            } else if keys.contains(key) {
                colors[key] = try parseColor(value, file: file, line: index + 1, key: key)
            }
        }
        return Theme(name: name, colors: colors, attributes: attributes)
    }

    /// The lines of a theme file: split at `\n` only (by scalar, so `\r\n`
    /// splits too), without a line's final `\r` or the file's leading
    /// byte-order mark. U+2028, NEL and form feed are characters of a line.
    static func lines(of text: String) -> [String] {
        var scalars = text.unicodeScalars[...]
        if scalars.first == "\u{FEFF}" { scalars = scalars.dropFirst() }
        return scalars.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            var line = String.UnicodeScalarView(line)
            if line.last == "\r" { line.removeLast() }
            return String(line)
        }
    }

    static func parseColor(_ value: String, file: String, line: Int, key: String) throws -> ThemeColor {
        let text = value.trimmingCharacters(in: .whitespaces)
        if text.isEmpty || text == "default" { return .terminalDefault }
        // Every character is checked: integer parsing alone would take a sign
        // (`#+12345`), and dropping the words that fail to parse would read
        // `1 x 2 3` or `300 1 2 3` as some other colour.
        if text.hasPrefix("#") {
            let hex = text.dropFirst()
            if hex.allSatisfy(\.isHexDigit) {
                if hex.count == 6, let value = UInt32(hex, radix: 16) {
                    return .rgb(UInt8(value >> 16), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF))
                }
                if hex.count == 2, let grey = UInt8(hex, radix: 16) { return .rgb(grey, grey, grey) }
            }
        } else {
            let words = text.split(separator: " ")
            let parts = words.compactMap { word in word.allSatisfy { $0.isASCII && $0.isWholeNumber } ? UInt8(word) : nil }
            if words.count == 3, parts.count == 3 { return .rgb(parts[0], parts[1], parts[2]) }
        }
        throw ThemeError(file: file, line: line, message: "\(key): bad colour \"\(text)\" (use #rrggbb, #gg, \"R G B\" or \"\")")
    }

    static func parseAttributes(_ value: String, file: String, line: Int) throws -> ThemeAttributes {
        var result: ThemeAttributes = []
        for word in value.split(whereSeparator: { $0 == "," || $0 == " " }) {
            switch word.lowercased() {
            case "bold": result.insert(.bold)
            case "dim": result.insert(.dim)
            case "reverse": result.insert(.reverse)
            case "underline": result.insert(.underline)
            case "none", "normal": break
            default: throw ThemeError(file: file, line: line, message: "unknown attribute \"\(word)\" (bold, dim, reverse, underline)")
            }
        }
        return result
    }

    // MARK: Finding themes

    /// Built-in themes, by name (the same text as the files in `Themes/`).
    public static let builtinSources: [String: String] = [
        "default": BuiltinThemes.defaultDark,
        "light": BuiltinThemes.light,
        "high-contrast": BuiltinThemes.highContrast,
        "mono": BuiltinThemes.mono,
    ]

    public static let builtinNames = ["default", "light", "high-contrast", "mono"]

    public static var builtinDefault: Theme {
        // The built-in sources are tested to parse; a failure here is a bug in this file.
        (try? parse(BuiltinThemes.defaultDark, name: "default", file: "built-in default"))
            ?? Theme(name: "default", colors: [:], attributes: [:])
    }

    /// A theme by name (user themes in `directories` first, then built-ins) or by path.
    public static func load(_ nameOrPath: String, directories: [String]) throws -> Theme {
        if nameOrPath.contains("/") || nameOrPath.hasSuffix(".theme") {
            let text = try themeText(nameOrPath)
            let name = URL(fileURLWithPath: nameOrPath).deletingPathExtension().lastPathComponent
            return try parse(text, name: name, file: nameOrPath)
        }
        for directory in directories {
            let path = directory + "/" + nameOrPath + ".theme"
            // A user theme that is there but unusable is reported, never
            // passed over for a built-in of the same name.
            guard FileManager.default.fileExists(atPath: path) else { continue }
            return try parse(try themeText(path), name: nameOrPath, file: path)
        }
        if let source = builtinSources[nameOrPath] {
            return try parse(source, name: nameOrPath, file: "built-in \(nameOrPath)")
        }
        let available = (builtinNames + directories.flatMap(userThemeNames)).sorted()
        throw ThemeError(file: nameOrPath, line: nil, message: "no such theme (available: \(Set(available).sorted().joined(separator: ", ")))")
    }

    /// The text of the theme file at `path`: a regular file of at most
    /// ``InputFile/maxBytes`` (anything else is a ``ThemeError`` saying why,
    /// never a wait or an unbounded read).
    static func themeText(_ path: String) throws(ThemeError) -> String {
        do {
            return try InputFile.text(path)
        } catch {
            throw ThemeError(file: path, line: nil,
                             message: error.message(unreadable: "cannot read the theme file", kind: "theme file"))
        }
    }

    static func userThemeNames(_ directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [])
            .filter { $0.hasSuffix(".theme") }.map { String($0.dropLast(6)) }
    }
}
