// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "realm-browser",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "RealmStorage", targets: ["RealmStorage"]),
        .library(name: "RealmQuery", targets: ["RealmQuery"]),
        .library(name: "RealmDB", targets: ["RealmDB"]),
        .library(name: "RealmCoreFile", targets: ["RealmCoreFile"]),
        .executable(name: "realm-browser", targets: ["realm-browser"]),
        .executable(name: "realm-bench", targets: ["realm-bench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-atomics.git", from: "1.3.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/LebJe/TOMLKit.git", from: "0.6.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
    ],
    targets: [
        // The storage engine: file format, copy-on-write B+trees, MVCC transactions.
        .target(
            name: "RealmStorage",
            dependencies: [.product(name: "Atomics", package: "swift-atomics"), .product(name: "Crypto", package: "swift-crypto"),
                           "CStorageSupport"],
            // Exclusivity is checked statically; the dynamic checks cost 10-15 % of insert time (perf, realm-bench).
            swiftSettings: [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]
        ),
        // What the engine needs from C: stores that bypass the cache, for the commit log's direct-I/O records.
        .target(name: "CStorageSupport"),
        // The object API: Realm, Object, @Persisted, Results, List, LinkingObjects, notifications, migrations.
        // The query language: lexer → parser → AST → binder → planner/evaluator, with diagnostics.
        .target(name: "RealmQuery", dependencies: ["RealmStorage"]),
        .target(name: "RealmDB", dependencies: ["RealmStorage", "RealmQuery"]),
        // What the command line does, without the command line: schema and data files, import, export, the
        // demo database, reports, and the conversion of Realm Core files.
        .target(name: "RealmTools", dependencies: ["RealmStorage", "RealmCoreFile"]),
        // Reading Realm Core's own .realm files (formats 2-24, encrypted ones too), read-only: another system's format,
        // kept apart from the engine.
        .target(name: "RealmCoreFile", dependencies: ["COpenSSL"]),
        // The system's libcrypto for Realm Core's page encryption (AES-256-CBC + HMAC-SHA224; swift-crypto has no
        // SHA-224).
        .systemLibrary(name: "COpenSSL", providers: [.apt(["libssl-dev"])]),
        // SQLite's C API, used only by the benchmark program for side-by-side runs.
        .systemLibrary(name: "CSQLite", providers: [.apt(["libsqlite3-dev"])]),
        // The browser without a terminal: canvas of cells, views, key decoding, app state + reducer, key map,
        // themes, and a virtual terminal for tests. Never imports curses.
        .target(name: "BrowserCore", dependencies: [
            "RealmStorage", "RealmQuery", "RealmTools", "RealmCoreFile", .product(name: "TOMLKit", package: "TOMLKit"),
        ]),
        // ncursesw's C API through a shim header (wide-character API, macros as functions).
        .systemLibrary(name: "CNCursesw", providers: [.apt(["libncursesw5-dev"])]),
        // Process-wide C state for restoring the terminal from a signal handler (saved termios, sigaction).
        .target(name: "CTerminalGuard"),
        // The ncurses implementation of BrowserCore's Terminal.
        .target(name: "BrowserTerminal", dependencies: ["BrowserCore", "CNCursesw", "CTerminalGuard"]),
        .executableTarget(name: "realm-browser", dependencies: [
            "RealmStorage", "RealmQuery", "RealmTools", "BrowserCore", "BrowserTerminal", "RealmCoreFile",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),
        .executableTarget(name: "realm-bench", dependencies: ["RealmStorage", "RealmQuery", "CSQLite", "RealmTools", "BrowserCore", "RealmCoreFile"]),
        // A child process for the crash and multi-process tests.
        .executableTarget(name: "realm-storage-worker", dependencies: ["RealmStorage"]),
        // Helpers shared by the test targets: temporary directories, a seeded PRNG.
        .target(name: "TestSupport", dependencies: ["RealmTools"], path: "Tests/TestSupport"),
        .testTarget(name: "RealmCoreFileTests", dependencies: ["RealmCoreFile", "TestSupport"],
                    exclude: ["Fixtures"]),  // real Realm Core files, read by path
        .testTarget(name: "RealmQueryTests", dependencies: ["RealmQuery", "TestSupport"]),
        .testTarget(name: "RealmDBTests", dependencies: ["RealmDB", "TestSupport", "realm-storage-worker"]),
        .testTarget(name: "RealmToolsTests", dependencies: ["RealmTools", "RealmQuery", "TestSupport", "realm-browser", "realm-storage-worker"]),
        .testTarget(name: "BrowserCoreTests", dependencies: ["BrowserCore", "RealmCoreFile", "TestSupport"],
                    exclude: ["Snapshots"]),
        // Runs the real realm-browser binary in tmux.
        .testTarget(name: "EndToEndTests", dependencies: ["TestSupport", "realm-browser"]),
        .testTarget(
            name: "RealmStorageTests",
            dependencies: ["RealmStorage", "CStorageSupport", "TestSupport", "realm-storage-worker"],
            exclude: ["Fixtures"]  // files read by path (a database written by an older format)
        ),
    ],
    swiftLanguageModes: [.v6]
)
