import Foundation
@_exported import TestSupport
@testable import RealmStorage

/// The schema most engine tests use: people with dogs.
let personDogSchema: [ClassSchema] = [
    ClassSchema(name: "Person", properties: [
        PropertySchema(name: "id", type: .int, isPrimaryKey: true),
        PropertySchema(name: "name", type: .string, isIndexed: true),
        PropertySchema(name: "age", type: .int),
        PropertySchema(name: "nickname", type: .string, isOptional: true),
        .list("dogs", of: "Dog"),
        PropertySchema(name: "tags", type: .string, isList: true),
    ]),
    ClassSchema(name: "Dog", properties: [
        PropertySchema(name: "name", type: .string),
        PropertySchema(name: "weight", type: .double),
        .link("owner", to: "Person"),
        .linkingObjects("owners", from: "Person", property: "dogs"),
    ]),
]
