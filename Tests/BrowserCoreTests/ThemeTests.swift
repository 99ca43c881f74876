import Foundation
import Testing
@testable import BrowserCore

@Suite struct ThemeTests {
    static let themesDir = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("themes")

    @Test(arguments: ["dark", "light", "high-contrast", "monochrome"])
    func builtinThemesMatchTheFilesAndParse(name: String) throws {
        let file = try String(contentsOf: Self.themesDir.appendingPathComponent("\(name).toml"), encoding: .utf8)
        let embedded = try #require(BuiltinThemes.all.first { $0.name == name })
        #expect(embedded.toml + "\n" == file, "themes/\(name).toml changed: run scripts/embed-themes.sh")
        let theme = try #require(try Theme.builtin(name))
        #expect(theme.name == name)
        // Every role is styled.
        for role in Role.allCases { #expect(theme.styles[role] != nil, "\(name) leaves out \(role)") }
    }

    @Test func mistakesNameTheFileLineAndKey() throws {
        func error(_ text: String) -> ThemeError? {
            do { _ = try Theme.parse(text, file: "my.toml"); return nil } catch let e as ThemeError { return e } catch { return nil }
        }
        let badColor = error("""
        name = "x"
        [styles]
        normal = { fg = "default" }
        header = { fg = "blu", bold = true }
        """)
        #expect(badColor?.line == 4 && badColor?.key == "styles.header.fg")
        #expect(badColor?.description.hasPrefix("my.toml:4: styles.header.fg: not a colour") == true)
        let badRole = error("[styles]\nnormal = {}\n\nheadr = { bold = true }\n")
        #expect(badRole?.line == 4 && badRole?.key == "styles.headr")
        let badType = error("[styles]\nnormal = {}\n[styles.header]\nbold = \"yes\"\n")
        #expect(badType?.line == 4 && badType?.key == "styles.header.bold")
        let syntax = error("name = \"x\"\n[styles\nnormal = {}\n")
        #expect(syntax?.line == 2 && syntax?.description.contains("TOML syntax") == true)
        let missing = error("name = \"x\"\n")
        #expect(missing?.key == "styles.normal")
        let unknownKey = error("[styles]\nnormal = {}\n")
        #expect(unknownKey == nil)
    }

    @Test func loadFindsFilesAndBuiltins() throws {
        let dir = TempThemeDir()
        try "name = \"mine\"\n[styles]\nnormal = { fg = 12 }\n".write(toFile: dir.path + "/mine.toml", atomically: true, encoding: .utf8)
        #expect(try Theme.load("mine", searchDirectories: [dir.path]).style(.normal).foreground == .indexed(12))
        #expect(try Theme.load(dir.path + "/mine.toml", searchDirectories: []).name == "mine")
        #expect(try Theme.load("light", searchDirectories: [dir.path]).name == "light")
        #expect(throws: ThemeError.self) { try Theme.load("nope", searchDirectories: [dir.path]) }
    }

    @Test func colorsFallBack() {
        #expect(Color.rgb(255, 0, 0).xterm256 == 196)
        #expect(Color.rgb(0x88, 0xc0, 0xd0).xterm256 == 110)
        #expect(Color.rgb(0x3b, 0x42, 0x52).xterm256 == 238)
        #expect(Color.rgb(255, 0, 0).basic8 == 1)
        #expect(Color.rgb(0, 0, 255).basic8 == 4)
        #expect(Color.rgb(250, 250, 250).basic8 == 7)
        #expect(Color.indexed(12).basic8 == 4)
        #expect(Color.default.xterm256 == -1)
        let mono = Theme.dark.withoutColors()
        #expect(Role.allCases.allSatisfy { mono.style($0).foreground == .default && mono.style($0).background == .default })
        #expect(mono.style(.cursorRow).reverse)
    }
}

final class TempThemeDir {
    let path = NSTemporaryDirectory() + "rbthemes-\(UUID().uuidString.prefix(8))"
    init() { try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) }
    deinit { try? FileManager.default.removeItem(atPath: path) }
}
