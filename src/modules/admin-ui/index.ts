export { createAdminUiModule } from './module.js'
