import Foundation
#if canImport(Glibc)
import Glibc
#endif
@_exported import struct RealmTools.SplitMix64

/// A temporary directory removed when the value is deinitialised.
public final class TempDir {
    public let path: String

    public init(_ name: String = #function) {
        let base = FileManager.default.temporaryDirectory.path
        let clean = name.filter { $0.isLetter || $0.isNumber }
        path = "\(base)/rbtest-\(clean)-\(UUID().uuidString.prefix(8))"
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    public func file(_ name: String) -> String { "\(path)/\(name)" }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// An executable product of this package could not be found.
public struct ProductNotFound: Error, CustomStringConvertible {
    public let description: String
}

/// Where an executable product of this package is.
///
/// Looked for, in order: `$environmentVariable`; beside the running test executable (SwiftPM puts every
/// product of a build in one directory, `.build/<config>/`); beside the test bundle; under the package root
/// found from this source file, in `.build/debug` and `.build/release`.
public func productExecutablePath(_ name: String, environmentVariable: String) throws -> String {
    var candidates: [String] = []
    if let env = ProcessInfo.processInfo.environment[environmentVariable], !env.isEmpty { candidates.append(env) }
    var buf = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let n = readlink("/proc/self/exe", &buf, buf.count - 1)
    if n > 0 {
        let exe = String(decoding: buf[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        candidates.append(URL(fileURLWithPath: exe).deletingLastPathComponent().appendingPathComponent(name).path)
    }
    if let arg0 = CommandLine.arguments.first, arg0.contains("/") {
        candidates.append(URL(fileURLWithPath: arg0).standardizedFileURL.deletingLastPathComponent().appendingPathComponent(name).path)
    }
    // On Darwin the tests run inside `<config>/X.xctest/Contents/MacOS/`; the bundle's directory is `<config>`.
    for bundle in Bundle.allBundles where bundle.bundleURL.pathExtension == "xctest" {
        candidates.append(bundle.bundleURL.deletingLastPathComponent().appendingPathComponent(name).path)
    }
    let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    for config in ["debug", "release"] {
        candidates.append(packageRoot.appendingPathComponent(".build/\(config)/\(name)").path)
    }
    for c in candidates where access(c, X_OK) == 0 { return c }
    throw ProductNotFound(description: "\(name) executable not found; build it with `swift build --build-tests` or set "
        + "\(environmentVariable). Looked at:\n  " + candidates.joined(separator: "\n  "))
}

/// What a finished child process printed and how it exited.
public struct ProcessResult {
    public let status: Int32
    public let stdout: String
    public let stderr: String
}

/// Runs an executable to completion, with its output captured through files (so it can never block on a pipe).
public func runProcess(_ path: String, _ arguments: [String], in directory: String) throws -> ProcessResult {
    let out = directory + "/.stdout-\(UUID().uuidString)"
    let err = directory + "/.stderr-\(UUID().uuidString)"
    _ = FileManager.default.createFile(atPath: out, contents: nil)
    _ = FileManager.default.createFile(atPath: err, contents: nil)
    defer {
        try? FileManager.default.removeItem(atPath: out)
        try? FileManager.default.removeItem(atPath: err)
    }
    let p = Process()
    p.executableURL = URL(fileURLWithPath: path)
    p.arguments = arguments
    p.currentDirectoryURL = URL(fileURLWithPath: directory)
    p.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: out))
    p.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: err))
    p.standardInput = FileHandle.nullDevice
    try p.run()
    p.waitUntilExit()
    return ProcessResult(status: p.terminationStatus,
                         stdout: String(decoding: FileManager.default.contents(atPath: out) ?? Data(), as: UTF8.self),
                         stderr: String(decoding: FileManager.default.contents(atPath: err) ?? Data(), as: UTF8.self))
}
