export { settingDefinitions, type SettingKey, type Settings } from './definitions.js'
export { settingsRoutes } from './routes.js'
export { createSettingsService, type SettingsService } from './service.js'
export { createSettingsModule } from './module.js'
